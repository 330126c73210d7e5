"""The OpenAPI document both runtimes serve: security schemes declared by the dependencies that read
the headers, every operation described, tagged and secured by what it reads, and every request body
with a realistic example. The local app serves its docs pages' assets itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from memvault.api.app import TAGS, create_app
from memvault.core.deps import Deps
from memvault.runtime.local import docs_assets

MEMORY = [{"memoryKey": []}, {"memoryKeyHeader": []}]
BRAIN = [{"brainCredential": []}, {"brainCredentialHeader": []}, {"cloudflareAccess": []}]
ROUTER = [{"memoryKeyHeader": []}, {"sessionId": []}]
ADMIN = [{"adminToken": []}]


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_security_schemes_are_declared_once_with_the_headers_they_read(deps: Deps) -> None:
    schemes = create_app(deps).openapi()["components"]["securitySchemes"]
    assert {name: (s["type"], s.get("scheme") or s["name"]) for name, s in schemes.items()} == {
        "memoryKey": ("http", "bearer"),
        "memoryKeyHeader": ("apiKey", "X-Memory-Key"),
        "sessionId": ("apiKey", "X-Session-ID"),
        "brainCredential": ("http", "bearer"),
        "brainCredentialHeader": ("apiKey", "X-Memvault-Brain-Token"),
        "cloudflareAccess": ("apiKey", "Cf-Access-Jwt-Assertion"),
        "adminToken": ("http", "bearer"),
    }
    assert all(scheme["description"] for scheme in schemes.values())


def test_every_operation_is_described_tagged_and_secured_by_what_it_reads(deps: Deps) -> None:
    document = create_app(deps).openapi()
    assert [tag["name"] for tag in document["tags"]] == [tag["name"] for tag in TAGS]
    seen = set()
    for path, method, operation in operations(document):
        where = f"{method.upper()} {path}"
        assert operation.get("description", "").strip(), f"{where} has no description"
        (tag,) = operation["tags"]
        seen.add(tag)
        expected = {"memory": MEMORY, "brain": BRAIN, "memory router": ROUTER, "admin": ADMIN,
                    "health": None}[tag]
        assert operation.get("security") == expected, where
    assert seen == {tag["name"] for tag in TAGS}
    brain_operations = [op for _, _, op in operations(document) if op["tags"] == ["brain"]]
    # Nineteen operations under /v1/brain, and the fourteen paths the first fourteen had before, kept as
    # deprecated aliases (retiring a fact by hand and skill proposals came after them).
    assert len([op for op in brain_operations if not op.get("deprecated")]) == 19
    assert len([op for op in brain_operations if op.get("deprecated")]) == 14


def test_every_json_body_has_a_realistic_example(deps: Deps) -> None:
    document = create_app(deps).openapi()
    schemas = document["components"]["schemas"]
    for path, method, operation in operations(document):
        content = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if content is None:
            continue
        ref = content["schema"].get("$ref") or next(s["$ref"] for s in content["schema"]["anyOf"] if "$ref" in s)
        (example,) = schemas[ref.rsplit("/", 1)[1]]["examples"]
        text = json.dumps(example)
        assert '"now": 0' not in text and ": 0," not in text and ": 0}" not in text, (method, path, example)
        assert example, (method, path)


async def test_the_local_docs_serve_their_own_assets_and_the_worker_keeps_fastapis(deps: Deps) -> None:
    local, worker = create_app(deps, docs_assets()), create_app(deps)
    assert local.openapi() == worker.openapi()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=local), base_url="http://memvault") as client:
        page = (await client.get("/docs")).text
        assert "/docs/assets/swagger-ui-bundle.js" in page and "cdn" not in page
        script = await client.get("/docs/assets/swagger-ui-bundle.js")
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        assert len(script.content) > 100_000
        assert "/docs/assets/redoc.standalone.js" in (await client.get("/redoc")).text
        for name in ("index.html", "..%2Fcore.py", "../__init__.py"):
            assert (await client.get(f"/docs/assets/{name}")).status_code == 404
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=worker), base_url="http://memvault") as client:
        assert "cdn.jsdelivr.net" in (await client.get("/docs")).text
        assert (await client.get("/docs/assets/swagger-ui-bundle.js")).status_code == 404

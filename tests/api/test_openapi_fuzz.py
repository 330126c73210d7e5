"""Schemathesis against the real local server's own OpenAPI document: generated requests (valid
and not) to every memory and brain operation never get a 5xx, and every answer conforms to the
document (status codes, content types, bodies). The memory-router routes forward to providers and
are exercised with the official SDKs instead (tests/api/providers)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from test_local_server import MEMVAULT, environment, free_port, server

BRAIN_TOKEN = "fuzz-writer-token"
ADMIN_TOKEN = "fuzz-admin-token-of-at-least-32-characters"
# No 5xx, and answers as documented. (Not "valid data is accepted": the document cannot say that a
# timestamp string must be a time, so such refusals are right even when the schema allows the shape.)
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]
# Longer runs: FUZZ_EXAMPLES=300 .venv/bin/python -m pytest tests/api/test_openapi_fuzz.py
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "12"))


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    data = tmp_path_factory.mktemp("fuzz")
    credentials = {hashlib.sha256(BRAIN_TOKEN.encode()).hexdigest(): {"name": "fuzz", "scopes": ["business", "family"], "writer": True}}
    env = {**environment(data), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials), "MEMVAULT_ADMIN_TOKEN": ADMIN_TOKEN,
           "MEMVAULT_PROVIDER_KEY_SECRET": base64.b64encode(b"fuzz-sealing-secret-32-bytes-lon").decode()}
    key = subprocess.run([str(MEMVAULT), "keys", "create"], env=env, capture_output=True, text=True, check=True).stdout.strip()
    with server(data, free_port(), env) as url:
        auth = {"Authorization": f"Bearer {BRAIN_TOKEN}", "X-Memory-Key": key}
        seed = [{"role": "user", "content": f"Seed note {i} about the harbour lamp.", "id": f"seed-{i}"} for i in range(40)]
        httpx.post(f"{url}/v1/memory", json={"messages": seed}, headers={"Authorization": f"Bearer {key}"}).raise_for_status()
        httpx.post(f"{url}/memory/write", json={"content": "The harbour lamp is lit at dusk.", "scope": "business"}, headers=auth)
        yield url, {**auth, "Authorization": f"Bearer {key}"}


def test_no_5xx_and_answers_match_the_document(running: tuple[str, dict[str, str]]) -> None:
    url, headers = running
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json").exclude(tag="memory router")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    calls = sum(fuzz(operation, url, headers) for operation in operations)
    assert calls >= 5 * len(operations)


def credentials_for(path: str, headers: dict[str, str]) -> dict[str, str]:
    """Brain routes take the brain credential from Authorization (memory routes then read the
    memory key from X-Memory-Key); admin routes take the admin token."""
    if path.startswith(("/v1/brain", "/memory", "/recall")):
        return {**headers, "Authorization": f"Bearer {BRAIN_TOKEN}"}
    if path.startswith("/v1/admin"):
        return {**headers, "Authorization": f"Bearer {ADMIN_TOKEN}"}
    return headers


def fuzz(operation: Any, url: str, headers: dict[str, str]) -> int:
    """Run the generated cases of one operation; how many were sent."""
    headers = credentials_for(operation.path, headers)

    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def answers_conform(case: Any) -> None:
        sent.append(case.path)
        case.call_and_validate(base_url=url, headers=headers, checks=CHECKS)

    sent: list[str] = []
    answers_conform()
    return len(sent)


def test_the_document_lists_error_answers_and_ndjson_export(running: tuple[str, dict[str, str]]) -> None:
    url, _ = running
    document = httpx.get(f"{url}/openapi.json").json()
    store = document["paths"]["/v1/memory"]["post"]["responses"]
    assert {"400", "401", "409", "413", "422", "503", "507"} <= set(store)
    assert store["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert "application/x-ndjson" in document["paths"]["/memory/export"]["get"]["responses"]["200"]["content"]


def test_unknown_routes_and_methods_answer_in_the_envelope(running: tuple[str, dict[str, str]]) -> None:
    url, headers = running
    missing = httpx.get(f"{url}/nowhere")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = httpx.put(f"{url}/v1/memory/search", headers=headers)
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"
    unreadable = httpx.post(f"{url}/v1/memory", content=b'{"messages": [{"role": "user", "content": "\xff"}]}', headers={**headers, "content-type": "application/json"})
    assert unreadable.status_code in (400, 422) and "error" in unreadable.json()


def test_a_chunked_body_over_the_limit_is_a_413(running: tuple[str, dict[str, str]]) -> None:
    url, headers = running

    def chunks() -> Iterator[bytes]:
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(1200):
            yield b"x" * 1024
        yield b'"}]}'

    response = httpx.post(f"{url}/v1/memory", content=chunks(), headers={**headers, "content-type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"


def test_a_path_with_a_control_character_is_refused_in_the_providers_envelope(running: tuple[str, dict[str, str]]) -> None:
    url, headers = running
    response = httpx.post(f"{url}/v1beta/models/gem%01ini:generateContent", json={"contents": []}, headers=headers)
    assert response.status_code == 400 and response.json()["error"]["status"] == "INVALID_ARGUMENT"



# Values that are valid JSON but that no generated case holds: half a surrogate pair (as JavaScript
# escapes a string cut inside an emoji, and as raw bytes), and a number too long to convert.
HOSTILE_VALUES = [b'"cut \\ud83d"', b'"\xed\xb0\x80 raw"', b"1" + b"0" * 5000]


def test_every_field_of_every_json_operation_refuses_hostile_values_without_a_5xx(
    running: tuple[str, dict[str, str]],
) -> None:
    url, headers = running
    document = httpx.get(f"{url}/openapi.json").json()
    schemas = document["components"]["schemas"]
    sent = 0
    with httpx.Client(base_url=url, timeout=30) as client:
        for path, methods in document["paths"].items():
            for method, operation in methods.items():
                if "memory router" in operation.get("tags", []) or "requestBody" not in operation:
                    continue
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                fields = schemas[schema["$ref"].rsplit("/", 1)[1]]["properties"] if "$ref" in schema else schema.get("properties", {})
                concrete = path.replace("{id}", "mem-0000000000000000").replace("{slug}", "s").replace("{key_id}", "key_x")
                auth = credentials_for(path, headers)
                for field in fields:
                    for value in HOSTILE_VALUES:
                        body = b'{"%s": %s}' % (field.encode(), value)
                        answer = client.request(method.upper(), concrete, content=body,
                                                headers={**auth, "content-type": "application/json"})
                        sent += 1
                        assert answer.status_code < 500, (method, path, field, value[:20], answer.text[:200])
                        assert "error" in answer.json() or answer.status_code < 300, (method, path, field)
    assert sent >= 100

"""The brain's part of the OpenAPI document is generated from core's declarations: every operation,
on its /v1 path and on a kept path, documents exactly the fields its parser takes (as that path
names them) and the answer it gives, and every schema it names is in the document."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault.api.app import create_app
from memvault.api.routes.brain import ROUTES
from memvault.core.brain import OPERATIONS
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps


@pytest.fixture(name="document")
async def document_fixture(tmp_path: Path) -> AsyncIterator[dict[str, Any]]:
    deps: Deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
    try:
        yield create_app(deps).openapi()
    finally:
        await close_local_deps(deps)


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def component(document: dict[str, Any], ref: str) -> dict[str, Any]:
    found: dict[str, Any] = document["components"]["schemas"][ref.removeprefix("#/components/schemas/")]
    return found


def fields(cls: Any) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_every_operation_has_a_v1_path(document: dict[str, Any]) -> None:
    current = {route.op.name for route in ROUTES if not route.deprecated}
    assert current == set(OPERATIONS)
    assert all(document["paths"][route.path][route.method.lower()].get("deprecated") is None
               for route in ROUTES if not route.deprecated)


def test_every_name_the_document_refers_to_is_in_it(document: dict[str, Any]) -> None:
    names = set(document["components"]["schemas"])
    assert {ref.removeprefix("#/components/schemas/") for ref in refs(document)} <= names


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: f"{r.method} {r.path}")
def test_each_path_documents_the_fields_its_operation_takes_and_the_answer_it_gives(
    document: dict[str, Any], route: Any
) -> None:
    operation = document["paths"][route.path][route.method.lower()]
    assert bool(operation.get("deprecated")) == route.deprecated
    ops = [route.op, *([route.when_given[1]] if route.when_given else [])]
    renames, answers = ({}, {}) if route.dialect is None else (route.dialect.renames, route.dialect.answers)
    theirs = {new: old for old, new in renames.items()}
    taken = {theirs.get(name, name) for op in ops for name in fields(op.input)}
    documented = {parameter["name"] for parameter in operation.get("parameters", [])}
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        assert operation["requestBody"]["content"].keys() == {"application/json"}
        declared = component(document, body["$ref"])
        documented |= set(declared["properties"])
        assert declared["additionalProperties"] is False and declared["examples"]
    choices = set(route.dialect.choices) if route.dialect else set()
    assert documented == taken | choices, route.path

    answer = operation["responses"][str(route.status)]["content"]
    if route.op.name == "export_facts":
        assert set(answer) == {"application/x-ndjson"}
        return
    schema = answer["application/json"]["schema"]
    outputs = [result for op in ops for result in (typing.get_args(op.output) or [op.output])]
    answered = [component(document, ref) for ref in refs(schema)]
    assert len(answered) == len(outputs)
    for declared, result in zip(answered, outputs, strict=True):
        assert set(declared["properties"]) == {answers.get(name, name) for name in fields(result)}, route.path
        assert declared["additionalProperties"] is False


def test_the_kept_paths_carry_their_names_in_the_document(document: dict[str, Any]) -> None:
    recall = document["paths"]["/recall"]["get"]
    assert {p["name"] for p in recall["parameters"]} == {"q", "as_of", "budget"}
    answer = component(document, recall["responses"]["200"]["content"]["application/json"]["schema"]["$ref"])
    assert "asof" in answer["properties"] and "as_of" not in answer["properties"]
    consolidate = document["paths"]["/memory/consolidate"]["post"]["requestBody"]["content"]["application/json"]
    assert "dryRun" in component(document, consolidate["schema"]["$ref"])["properties"]
    current = document["paths"]["/v1/brain/consolidate"]["post"]["requestBody"]["content"]["application/json"]
    assert "dry_run" in component(document, current["schema"]["$ref"])["properties"]
    bands = next(p for p in document["paths"]["/memory/write"]["post"]["parameters"] if p["name"] == "bands")
    assert bands["in"] == "query" and bands["schema"]["enum"] == ["on", "off"]

"""The brain's part of the OpenAPI document, generated from core's declarations of each operation's
input and result (``core/brain/wire``): parameters or request body, the answer, and the components
they name. A kept path's fields and answer carry its own names."""

from __future__ import annotations

import copy
import re
import typing
from typing import Any

from memvault.api.brain_http import BrainRoute, Dialect, field_names
from memvault.api.schemas import NDJSON
from memvault.core.brain.wire import Schemas

COMPONENTS = Schemas()
_PATH_FIELD = re.compile(r"{(\w+)}")


def components() -> dict[str, dict[str, Any]]:
    return COMPONENTS.defs


def _declared(cls: Any) -> dict[str, Any]:
    """The component of an input class (named in the document as the class is)."""
    return COMPONENTS.defs[COMPONENTS.of(cls, False)["$ref"].rsplit("/", 1)[1]]


def _dialect_copy(ref: dict[str, Any], dialect: Dialect, output: bool) -> dict[str, Any]:
    """A component as a kept path names it: a copy under another name with its keys renamed."""
    if "$ref" not in ref:
        return ref
    name = ref["$ref"].rsplit("/", 1)[1]
    mapping = dict(dialect.answers) if output else {ours: theirs for theirs, ours in dialect.renames.items()}
    original = COMPONENTS.defs[name]
    if not set(mapping) & set(original.get("properties", {})):
        return ref
    renamed = copy.deepcopy(original)
    renamed["properties"] = {mapping.get(k, k): v for k, v in original["properties"].items()}
    if "required" in renamed:
        renamed["required"] = [mapping.get(k, k) for k in original["required"]]
    renamed["examples"] = [{mapping.get(k, k): v for k, v in example.items()} for example in original.get("examples", [])]
    COMPONENTS.defs["Legacy" + name] = renamed
    return {"$ref": COMPONENTS.prefix + "Legacy" + name}


def openapi_extra(route: BrainRoute) -> dict[str, Any]:
    """The operation's parameters (GET) or request body (POST), and the parameters of its path."""
    dialect = route.dialect or Dialect()
    in_path = set(_PATH_FIELD.findall(route.path))
    declared = _declared(route.op.input)
    properties, required = declared.get("properties", {}), set(declared.get("required", []))
    names = [dialect.theirs(name) for name in field_names(route.op)]
    if route.when_given is not None:
        switched = route.when_given[1]
        properties = {**properties, **_declared(switched.input).get("properties", {})}
        names += [name for name in field_names(switched) if name not in names]
    parameters = [
        _parameter(name, "path" if name in in_path else "query", properties[dialect.renames.get(name, name)],
                   name in in_path or (route.in_query and dialect.renames.get(name, name) in required))
        for name in names if name in in_path or route.in_query
    ]
    parameters += [_parameter(name, "query", {"enum": list(values)}, False) for name, values in dialect.choices.items()]
    extra_doc: dict[str, Any] = {"parameters": parameters} if parameters else {}
    if not route.in_query and set(properties) - {dialect.renames.get(name, name) for name in in_path}:
        schema = _dialect_copy(COMPONENTS.of(route.op.input, False), dialect, output=False)
        extra_doc["requestBody"] = {"required": bool(required - in_path),
                                    "content": {"application/json": {"schema": schema}}}
    return extra_doc


def _parameter(name: str, where: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    described = {k: v for k, v in schema.items() if k != "description"}
    parameter = {"name": name, "in": where, "required": required, "schema": described}
    if schema.get("description"):
        parameter["description"] = schema["description"]
    return parameter


def answer(route: BrainRoute) -> dict[int | str, dict[str, Any]]:
    if route.op.name == "export_facts":
        COMPONENTS.of(typing.get_type_hints(route.op.output)["facts"], True)
        return {200: {"description": "Every fact the credential may read, one ExportedFact object per line.",
                      "content": NDJSON}}
    outputs = [route.op.output] + ([route.when_given[1].output] if route.when_given else [])
    schemas = [_dialect_copy(COMPONENTS.of(output, True), route.dialect or Dialect(), output=True) for output in outputs]
    schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    return {route.status: {"description": route.op.summary, "content": {"application/json": {"schema": schema}}}}

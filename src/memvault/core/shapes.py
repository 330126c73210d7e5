"""Results as every surface answers them: a result is a dataclass whose fields are the public shape,
turned into plain data once (``plain``), and whose JSON schema, for the API's documents, is
generated from its annotations and each field's description (``result_schema``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from memvault.core.contract import COMPONENTS


def doc(text: str) -> dict[str, str]:
    """A result field's metadata with its description (read by ``result_schema``)."""
    return {"description": text}


def plain(value: Any) -> Any:
    """A result as plain data: dataclasses as objects field by field, tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    return value


def plain_object(value: Any) -> dict[str, Any]:
    """``plain`` of a result that is an object, as the object it is."""
    data = plain(value)
    if not isinstance(data, dict):
        raise TypeError(f"{type(value).__name__} is not a result object")
    return data


def result_schema(kind: type, refs: str = COMPONENTS) -> dict[str, dict[str, Any]]:
    """The JSON schema of a result dataclass and of every dataclass it holds, by class name."""
    found: dict[str, dict[str, Any]] = {}
    _object_schema(kind, refs, found)
    return found


def _object_schema(kind: type, refs: str, found: dict[str, dict[str, Any]]) -> None:
    if kind.__name__ in found:
        return
    found[kind.__name__] = {}  # reserved first: a type may hold itself
    hints = get_type_hints(kind)
    properties = {}
    for item in fields(kind):
        typed = _type_schema(hints[item.name], refs, found)
        text = item.metadata.get("description")
        properties[item.name] = {**typed, "description": text} if text else typed
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(properties)}
    if kind.__doc__ and not kind.__doc__.startswith(f"{kind.__name__}("):
        schema["description"] = " ".join(kind.__doc__.split())
    found[kind.__name__] = schema


def _type_schema(hint: Any, refs: str, found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        options = [_type_schema(arg, refs, found) for arg in args if arg is not NoneType]
        nullable = [{"type": "null"}] if NoneType in args else []
        return options[0] if len(options) == 1 and not nullable else {"anyOf": [*options, *nullable]}
    if origin in (list, tuple) or hint in (list, tuple):
        return {"type": "array", "items": _type_schema(args[0], refs, found) if args else {}}
    if origin is dict or hint is dict:
        values = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": True if values is Any else _type_schema(values, refs, found)}
    if origin is Literal:
        return {"enum": list(args)}
    if isinstance(hint, type) and is_dataclass(hint):
        _object_schema(hint, refs, found)
        return {"$ref": refs + hint.__name__}
    return dict(_SCALARS.get(hint, {}))


_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"},
    Any: {}, object: {},
}

"""The wire form of the brain's commands and results, derived from their dataclasses: one checker
that turns plain data into a command (naming the field it refuses), the plain data of a result,
and the JSON Schema of both. The HTTP document, the MCP tool schemas and every parser read the
same field declarations, so what is documented and what is accepted cannot drift apart."""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import types
import typing
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal, TypeVar

from memvault.core.characters import require_characters
from memvault.core.errors import InvalidField
from memvault.core.times import parse_time, require_time

T = TypeVar("T")
# A whole number as a query string carries it (long enough for any bound a field has).
_INTEGER_TEXT = re.compile(r"^[+-]?\d{1,18}$")
_TIME_SCHEMA: dict[str, Any] = {"anyOf": [{"type": "number"}, {"type": "string"}]}


def spec(
    doc: str = "", *, default: Any = dataclasses.MISSING, omit: bool = False, time: bool = False,
    low: float | None = None, high: float | None = None, max_chars: int | None = None, nonblank: bool = False,
) -> Any:
    """A field of a command or result. ``omit``: a result leaves the key out while it is None.
    ``time``: epoch seconds or ISO 8601 on the wire, epoch seconds once parsed."""
    metadata = {"doc": doc, "omit": omit, "time": time, "low": low, "high": high, "max_chars": max_chars,
                "nonblank": nonblank}
    return dataclasses.field(default=default, metadata=metadata)


@typing.dataclass_transform(frozen_default=True, field_specifiers=(spec,))
def shape(cls: type[T]) -> type[T]:
    """A command or result: a frozen dataclass whose fields may be declared with ``spec``."""
    return dataclasses.dataclass(frozen=True)(cls)


@functools.cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _label(where: str, name: str) -> str:
    return f"{where}{name}" if where else name


def parse_fields(cls: type[T], data: object, where: str = "", text: bool = False) -> T:
    """``data`` checked against the fields of ``cls``: unknown names, types, bounds. An absent
    field, or a null one whose type has no null, takes its default. With ``text`` the values came
    as text (a query string): numbers and booleans are read from it, and an empty value is absent."""
    if not isinstance(data, Mapping):
        raise InvalidField(f"{where.rstrip('.') or 'the body'} must be a JSON object")
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(str(name) for name in data if name not in known)
    if unknown:
        raise InvalidField(f"unknown field{'s' if len(unknown) > 1 else ''}: "
                           f"{', '.join(_label(where, name) for name in unknown)}")
    values: dict[str, Any] = {}
    for name, field in known.items():
        value = data.get(name)
        if text and value == "":
            value = None
        hint = _hints(typing.cast(Any, cls))[name]
        if value is None and not (_nullable(hint) and name in data):
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                if not _nullable(hint):
                    raise InvalidField(f"{_label(where, name)} is required")
                values[name] = None
            continue
        require_characters(value, _label(where, name))
        values[name] = _value(hint, value, _label(where, name), field.metadata, text)
    return cls(**values)


def _nullable(hint: Any) -> bool:
    return _is_union(hint) and type(None) in typing.get_args(hint)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _value(hint: Any, value: Any, name: str, meta: Mapping[str, Any], text: bool) -> Any:
    if meta.get("time"):
        return parse_time(value, name) if _nullable(hint) else require_time(value, name)
    if _is_union(hint):
        if value is None:
            return None
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _value(inner, value, name, meta, text)
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin is list:
        if not isinstance(value, list | tuple):
            raise InvalidField(f"{name} must be a list")
        (item,) = typing.get_args(hint)
        return [_value(item, v, f"{name}[{i}]", {}, text) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise InvalidField(f"{name} must be a JSON object")
        return dict(value)
    if origin is Literal or (isinstance(hint, type) and issubclass(hint, Enum)):
        choices = [c.value if isinstance(c, Enum) else c for c in (typing.get_args(hint) or list(hint))]
        if value not in choices:
            words = [str(choice) for choice in choices]
            raise InvalidField(f"{name} must be {', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else
                               f"{name} must be {words[0]}")
        return hint(value) if isinstance(hint, type) else value
    if dataclasses.is_dataclass(hint):
        return parse_fields(hint, value, f"{name}.", text)  # type: ignore[arg-type]
    return _scalar(hint, value, name, meta, text)


def _scalar(hint: Any, value: Any, name: str, meta: Mapping[str, Any], text: bool) -> Any:
    if hint is str:
        if not isinstance(value, str) or (meta.get("nonblank") and not value.strip()):
            raise InvalidField(f"{name} must be {'non-empty ' if meta.get('nonblank') else ''}text")
        limit = meta.get("max_chars")
        if limit is not None and len(value) > limit:
            raise InvalidField(f"{name} is longer than {limit} characters")
        return value
    if hint is bool:
        if text and value in ("true", "false"):
            return value == "true"
        if not isinstance(value, bool):
            raise InvalidField(f"{name} must be true or false")
        return value
    number = _number(hint, value, name, text)
    low, high = meta.get("low"), meta.get("high")
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = f"between {low:g} and {high:g}" if low is not None and high is not None else (
            f"at least {low:g}" if low is not None else f"at most {high:g}")
        raise InvalidField(f"{name} must be {bounds}")
    return number


def _number(hint: Any, value: Any, name: str, text: bool) -> int | float:
    kind = "a whole number" if hint is int else "a number"
    if text and isinstance(value, str):
        if hint is int and _INTEGER_TEXT.match(value.strip()):
            return int(value)
        try:
            value = float(value) if hint is float else value
        except ValueError:
            raise InvalidField(f"{name} must be {kind}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidField(f"{name} must be {kind}")
    if hint is int:
        # A JS number crosses the RPC boundary as a float.
        if value != int(value):
            raise InvalidField(f"{name} must be {kind}")
        return int(value)
    return float(value)


_SCALARS = (str, int, float, bool, type(None))


def to_plain(value: Any) -> Any:
    """The JSON-able form of a result: dataclasses become objects (an ``omit`` field that is None
    is left out), enums their values."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for name, omit in _plain_fields(type(value)):
            item = getattr(value, name)
            if item is None and omit:
                continue
            out[name] = to_plain(item)
        return out
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: to_plain(item) for key, item in value.items()}
    return value


@functools.cache
def _plain_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    return tuple((f.name, bool(f.metadata.get("omit"))) for f in dataclasses.fields(cls))


def from_plain(hint: Any, value: Any) -> Any:
    """A result rebuilt from its own plain form (a cached answer); nothing is checked."""
    if value is None:
        return None
    if _is_union(hint):
        (inner,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return from_plain(inner, value)
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return [from_plain(item, v) for v in value]
    if dataclasses.is_dataclass(hint):
        hints = _hints(hint)  # type: ignore[arg-type]
        return hint(**{f.name: from_plain(hints[f.name], value[f.name])  # type: ignore[operator]
                       for f in dataclasses.fields(hint) if f.name in value})
    return value


class Schemas:
    """JSON Schemas of dataclasses, each named once in ``defs`` and referred to by ``prefix`` +
    its name. An output schema requires every key a result always carries; an input schema
    requires the fields without a default."""

    def __init__(self, prefix: str = "#/components/schemas/") -> None:
        self.prefix = prefix
        self.defs: dict[str, dict[str, Any]] = {}

    def of(self, hint: Any, output: bool) -> dict[str, Any]:
        if _is_union(hint):
            args = typing.get_args(hint)
            return {"anyOf": [self.of(arg, output) for arg in args]}
        origin = typing.get_origin(hint)
        if origin is list:
            return {"type": "array", "items": self.of(typing.get_args(hint)[0], output)}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.of(typing.get_args(hint)[1], output)}
        if origin is Literal:
            return {"enum": list(typing.get_args(hint))}
        if isinstance(hint, type) and issubclass(hint, Enum):
            return self._named(hint, lambda: {"type": "string", "enum": [m.value for m in hint],
                                              "description": _summary(hint)})
        if dataclasses.is_dataclass(hint):
            return self._named(hint, lambda: self._object(hint, output))  # type: ignore[arg-type]
        simple = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
        return {"type": simple[hint]} if hint in simple else {}

    def _named(self, cls: type, build: typing.Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if cls.__name__ not in self.defs:
            self.defs[cls.__name__] = {}  # taken before building: a class may refer to itself
            self.defs[cls.__name__] = build()
        return {"$ref": self.prefix + cls.__name__}

    def _object(self, cls: type, output: bool) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(cls):
            properties[field.name] = self._property(_hints(cls)[field.name], field.metadata, output)
            defaulted = field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            if (output and not field.metadata.get("omit")) or (not output and not defaulted):
                required.append(field.name)
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        if _summary(cls):
            schema["description"] = _summary(cls)
        examples = getattr(cls, "EXAMPLES", None)
        if examples:
            schema["examples"] = list(examples)
        return schema

    def _property(self, hint: Any, meta: Mapping[str, Any], output: bool) -> dict[str, Any]:
        if meta.get("time") and not output:
            schema = dict(_TIME_SCHEMA) if not _nullable(hint) else {"anyOf": [*_TIME_SCHEMA["anyOf"], {"type": "null"}]}
        else:
            schema = self.of(hint, output)
        bounds = {"minimum": meta.get("low"), "maximum": meta.get("high"), "maxLength": meta.get("max_chars"),
                  "minLength": 1 if meta.get("nonblank") else None}
        if not output:
            target: dict[str, Any] = schema if "type" in schema else next(
                (s for s in schema.get("anyOf", []) if s.get("type") in ("string", "integer", "number")), schema)
            target.update((key, value) for key, value in bounds.items() if value is not None)
        if meta.get("doc"):
            schema["description"] = meta["doc"]
        return schema


def _summary(cls: type) -> str:
    doc = (cls.__doc__ or "").strip()
    # A dataclass without a docstring gets one made of its signature; that says nothing.
    return "" if doc.startswith(cls.__name__ + "(") else " ".join(doc.split("\n\n")[0].split())

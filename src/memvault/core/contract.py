"""Commands as every surface hands them over. A command is a set of fields, each with its rule;
``Spec.values`` checks plain data (a JSON body, JS values over RPC, MCP arguments, argv) against
them in one place and names the field that breaks one. The JSON schemas of the API's documents are
generated from the same rules (``Spec.json_schema``), so what is documented is what is checked.
Results, the other half of an operation's contract, are in ``core/shapes.py``."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memvault.core.characters import require_characters
from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.redaction import redact, refuse_secret
from memvault.core.times import parse_time

MAX_ID_CHARS = 200
COMPONENTS = "#/components/schemas/"
TRUE_TEXTS = frozenset({"1", "true", "yes", "on"})
FALSE_TEXTS = frozenset({"0", "false", "no", "off"})


def check_id(value: object, where: str) -> str:
    """The one rule of session and message ids, on every surface: text of 1 to 200 printable
    characters, not only spaces (an integer, as JS or a JSON file may send, is taken as its digits)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidField(f"{where} must be text")
    text = str(value)
    if not text.strip() or len(text) > MAX_ID_CHARS or not text.isprintable():
        raise InvalidField(f"{where} must be 1 to {MAX_ID_CHARS} printable characters")
    return text


def check_stored_id(value: object, where: str) -> str:
    """``check_id`` for an id that is stored, names a vault (a message's id, a session's) or is
    repeated in an answer (a key id the admin names: "no active key …"): it also passes the secret
    gate, refused rather than redacted, since a redacted id would silently name something else."""
    text = check_id(value, where)
    refuse_secret(where, text, InvalidField)
    return text


@dataclass(frozen=True)
class Rule:
    """One field of a command: its name, whether it must be given, and what it is when not."""

    name: str
    description: str = ""
    required: bool = False
    default: Any = None

    def parse(self, value: object, where: str) -> Any:
        """``value`` (never None) as the field holds it, or ``InvalidField`` naming ``where``."""
        raise NotImplementedError

    def from_text(self, text: str) -> object:
        """``text`` from a carrier that holds only text (a query string, a header, argv) as the
        plain value it stands for; text that stands for none is left for ``parse`` to refuse."""
        return text

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def documented(self, refs: str) -> dict[str, Any]:
        """The field's schema as a document shows it; a field that may be left out may be null too."""
        schema = self.schema_with(refs)
        if not self.required:
            schema = {"anyOf": [*schema["anyOf"], {"type": "null"}]} if set(schema) == {"anyOf"} else {
                "anyOf": [schema, {"type": "null"}]}
        return {**schema, "description": self.description} if self.description else schema

    def schema_with(self, refs: str) -> dict[str, Any]:
        return self.schema()


@dataclass(frozen=True)
class Text(Rule):
    max_chars: int | None = None  # None: as long as the request may be
    blank: bool = False  # whether text of spaces only is a value

    def parse(self, value: object, where: str) -> str:
        if not isinstance(value, str) or (not self.blank and not value.strip()):
            raise InvalidField(f"{where} must be {'' if self.blank else 'non-empty '}text")
        if self.max_chars is not None and len(value) > self.max_chars:
            raise InvalidField(f"{where} is longer than {self.max_chars} characters")
        return value

    def schema(self) -> dict[str, Any]:
        longest = {} if self.max_chars is None else {"maxLength": self.max_chars}
        return {"type": "string", "minLength": 0 if self.blank else 1, **longest}


@dataclass(frozen=True)
class Choice(Rule):
    options: tuple[str, ...] = ()
    any_case: bool = False

    def parse(self, value: object, where: str) -> str:
        chosen = value.strip().lower() if self.any_case and isinstance(value, str) else value
        if chosen not in self.options:
            # The value is echoed as the gate leaves it: a caller's error is printed and logged.
            raise InvalidField(f"{where} must be one of {', '.join(self.options)}, got {redact(str(value)[:40]).text!r}")
        return str(chosen)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.options)}


@dataclass(frozen=True)
class WholeNumber(Rule):
    least: int = 0
    most: int | None = None

    def parse(self, value: object, where: str) -> int:
        # JS has numbers only: a whole float is a whole number.
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidField(f"{where} must be a whole number")
        number = value
        if number < self.least or (self.most is not None and number > self.most):
            within = f"of at least {self.least}" if self.most is None else f"from {self.least} to {self.most}"
            raise InvalidField(f"{where} must be a whole number {within}")
        return number

    def from_text(self, text: str) -> object:
        digits = text.strip()
        # A sign is read too, so "-5" is refused as out of range rather than as no number at all.
        unsigned = digits[1:] if digits[:1] in ("-", "+") else digits
        return int(digits) if unsigned.isdecimal() and unsigned.isascii() else text

    def schema(self) -> dict[str, Any]:
        bounds = {"minimum": self.least} | ({} if self.most is None else {"maximum": self.most})
        return {"type": "integer", **bounds}


@dataclass(frozen=True)
class Flag(Rule):
    def parse(self, value: object, where: str) -> bool:
        if not isinstance(value, bool):
            raise InvalidField(f"{where} must be true or false")
        return value

    def from_text(self, text: str) -> object:
        word = text.strip().lower()
        return True if word in TRUE_TEXTS else False if word in FALSE_TEXTS else text

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Moment(Rule):
    """A time: epoch seconds or ISO 8601 (``core/times.py``)."""

    def parse(self, value: object, where: str) -> float | None:
        return parse_time(value, where)

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [{"type": "number"}, {"type": "string"}]}


@dataclass(frozen=True)
class Identifier(Rule):
    """A session, message or key id (``check_id``); ``stored`` ids also pass the secret gate, since a
    redacted identifier would silently name something else."""

    stored: bool = False
    empty_is_absent: bool = False  # a message's id: "" asks for one to be assigned

    def parse(self, value: object, where: str) -> str | None:
        if self.empty_is_absent and value == "":
            return None
        return check_stored_id(value, where) if self.stored else check_id(value, where)

    def schema(self) -> dict[str, Any]:
        shortest = 0 if self.empty_is_absent else 1
        return {"anyOf": [{"type": "string", "minLength": shortest, "maxLength": MAX_ID_CHARS}, {"type": "integer"}]}


@dataclass(frozen=True)
class IdList(Rule):
    most: int = 10_000

    def parse(self, value: object, where: str) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not 1 <= len(value) <= self.most:
            raise InvalidField(f"{where} must be a list of 1 to {self.most} ids")
        return tuple(dict.fromkeys(check_id(item, f"{where}[{i}]") for i, item in enumerate(value)))

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": Identifier("id").schema(), "minItems": 1, "maxItems": self.most}


@dataclass(frozen=True)
class JsonObject(Rule):
    def parse(self, value: object, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise InvalidField(f"{where} must be an object")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": True}


@dataclass(frozen=True)
class ObjectList(Rule):
    """A list of objects, each checked by ``item`` where the command is built (a message needs
    the moment of the call and the batch's metadata)."""

    item: Spec | None = None
    most: int = 10_000

    def parse(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list | tuple) or not 1 <= len(value) <= self.most:
            raise InvalidField(f"{where} must be a list of 1 to {self.most} objects")
        return list(value)

    def schema_with(self, refs: str) -> dict[str, Any]:
        items = {"$ref": refs + self.item.name} if self.item else {"type": "object"}
        return {"type": "array", "items": items, "minItems": 1, "maxItems": self.most}


@dataclass(frozen=True)
class Spec:
    """The fields of one command (or of one object inside a command, such as a message)."""

    name: str
    rules: tuple[Rule, ...]
    description: str = ""
    examples: tuple[dict[str, Any], ...] = ()

    def rule(self, name: str) -> Rule:
        return next(rule for rule in self.rules if rule.name == name)

    def values(
        self, data: object, where: str = "", text: bool | Collection[str] = False,
        labels: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Each field's value from ``data``; fields it does not know are ignored. ``text`` (all,
        or the named fields) says a value came from a carrier of text only; ``labels`` names a
        field as its caller sent it, in errors."""
        if not isinstance(data, Mapping):
            raise InvalidInput(f"{where or 'the request body'} must be an object")
        values: dict[str, Any] = {}
        for rule in self.rules:
            raw = data.get(rule.name)
            if isinstance(raw, str) and (text is True or (not isinstance(text, bool) and rule.name in text)):
                raw = rule.from_text(raw)
            label = (labels or {}).get(rule.name) or (f"{where}.{rule.name}" if where else rule.name)
            require_characters(raw, label)
            value = None if raw is None else rule.parse(raw, label)
            if value is None and rule.required:
                raise InvalidField(f"{label} is required")
            values[rule.name] = rule.default if value is None else value
        return values

    def json_schema(self, refs: str = COMPONENTS) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {rule.name: rule.documented(refs) for rule in self.rules},
            "required": [rule.name for rule in self.rules if rule.required],
        }
        if self.description:
            schema["description"] = self.description
        if self.examples:
            schema["examples"] = list(self.examples)
        return schema

    def nested(self) -> list[Spec]:
        return [rule.item for rule in self.rules if isinstance(rule, ObjectList) and rule.item is not None]


def spec_schemas(specs: Iterable[Spec], refs: str = COMPONENTS) -> dict[str, dict[str, Any]]:
    """The JSON schemas of commands and of the objects inside them, by name."""
    found: dict[str, dict[str, Any]] = {}
    pending = list(specs)
    while pending:
        spec = pending.pop()
        if spec.name not in found:
            found[spec.name] = spec.json_schema(refs)
            pending.extend(spec.nested())
    return found

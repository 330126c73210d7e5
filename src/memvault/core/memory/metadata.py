"""Metadata a caller keeps with a message (a chat id, a platform, a reply-to id): a small JSON
object stored beside the message in its vault and handed back by ``read_memory``. It is never
searched; the mirror carries it only in its copy of the pending buffer (stored rows keep it in the
vault). It passes the same secret gate as the message's text, key by key: a value under a
credential's name goes whole, a number is read as the digits it is (a card sent as a JSON number),
and text that holds JSON is opened and gated the same way."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memvault.core.errors import InvalidField
from memvault.core.redaction import Redaction, redact_field

MAX_METADATA_CHARS = 4096
MAX_METADATA_DEPTH = 32


def metadata_text(value: object, where: str) -> str | None:
    """``value`` as canonical JSON text (keys sorted, no spaces), or None when absent or empty."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidField(f"{where} must be an object with text keys")
    if not value:
        return None
    if _depth(value) > MAX_METADATA_DEPTH:
        raise InvalidField(f"{where} nests objects and lists more than {MAX_METADATA_DEPTH} deep")
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidField(f"{where} must hold JSON values only (text, numbers, booleans, lists, objects)") from exc
    if len(text) > MAX_METADATA_CHARS:
        raise InvalidField(f"{where} is longer than {MAX_METADATA_CHARS} characters as JSON")
    return text


def _depth(value: object) -> int:
    deepest, level, pending = 0, 0, [(value, 1)]
    while pending:
        value, level = pending.pop()
        deepest = max(deepest, level)
        if deepest > MAX_METADATA_DEPTH:
            break
        children = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
        pending.extend((child, level + 1) for child in children)
    return deepest


def redact_metadata(text: str) -> Redaction:
    """Stored metadata (``metadata_text``) with every secret in it replaced; its JSON shape stays."""
    kinds: list[str] = []
    cleaned = _gated(json.loads(text), "", kinds)
    if not kinds:
        return Redaction(text, ())
    return Redaction(json.dumps(cleaned, sort_keys=True, separators=(",", ":"), ensure_ascii=False), tuple(kinds))


def _gated(value: Any, name: str, kinds: list[str]) -> Any:
    """``value`` found under the key ``name``, gated."""
    if isinstance(value, dict):
        return {_gated(key, "", kinds): _gated(item, key, kinds) for key, item in value.items()}
    if isinstance(value, list):
        return [_gated(item, name, kinds) for item in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        inside = _json_inside(value)
        if inside is not None:
            found: list[str] = []
            cleaned = _gated(inside, name, found)
            if found:
                kinds.extend(kind for kind in found if kind not in kinds)
                return json.dumps(cleaned, ensure_ascii=False)
    gate = redact_field(name, value if isinstance(value, str) else str(value))
    if not gate.kinds:
        return value
    kinds.extend(kind for kind in gate.kinds if kind not in kinds)
    return gate.text


def _json_inside(text: str) -> Any:
    """The object or list ``text`` spells in JSON, if it spells one."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        inside = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return inside if isinstance(inside, dict | list) and _depth(inside) <= MAX_METADATA_DEPTH else None


def metadata_value(text: str | None) -> dict[str, Any] | None:
    """Stored metadata as the object it was given as."""
    if text is None:
        return None
    value: dict[str, Any] = json.loads(text)
    return value

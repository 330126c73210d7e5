"""Metadata a caller keeps with a message (a chat id, a platform, a reply-to id): a small JSON
object stored beside the message in its vault and handed back by ``read_memory``. It is never
searched; the mirror carries it only in its copy of the pending buffer (stored rows keep it in the
vault). It passes the same secret gate as the message's text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memvault.core.errors import InvalidField
from memvault.core.redaction import Redaction, redact

MAX_METADATA_CHARS = 4096


def metadata_text(value: object, where: str) -> str | None:
    """``value`` as canonical JSON text (keys sorted, no spaces), or None when absent or empty."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidField(f"{where} must be an object with text keys")
    if not value:
        return None
    try:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidField(f"{where} must hold JSON values only (text, numbers, booleans, lists, objects)") from exc
    if len(text) > MAX_METADATA_CHARS:
        raise InvalidField(f"{where} is longer than {MAX_METADATA_CHARS} characters as JSON")
    return text


def redact_metadata(text: str) -> Redaction:
    """The gate over the whole JSON text, so a value is judged with its key beside it (as
    ``"password": "..."`` is in prose). Should a replacement ever break the JSON, every key and
    text value is passed through the gate on its own instead, which always keeps it valid."""
    whole = redact(text)
    if not whole.kinds:
        return whole
    try:
        json.loads(whole.text)
    except ValueError:
        kinds: list[str] = []
        cleaned = _redact_each(json.loads(text), kinds)
        return Redaction(json.dumps(cleaned, sort_keys=True, separators=(",", ":"), ensure_ascii=False), tuple(kinds))
    return whole


def _redact_each(value: Any, kinds: list[str]) -> Any:
    if isinstance(value, str):
        gate = redact(value)
        kinds.extend(kind for kind in gate.kinds if kind not in kinds)
        return gate.text
    if isinstance(value, list):
        return [_redact_each(item, kinds) for item in value]
    if isinstance(value, dict):
        return {_redact_each(k, kinds): _redact_each(v, kinds) for k, v in value.items()}
    return value


def metadata_value(text: str | None) -> dict[str, Any] | None:
    """Stored metadata as the object it was given as."""
    if text is None:
        return None
    value: dict[str, Any] = json.loads(text)
    return value

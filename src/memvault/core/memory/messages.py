"""The one input normaliser: a raw message from any surface (HTTP, RPC, CLI, import) becomes a
``Message``, under the same rules everywhere."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.memory.metadata import metadata_text
from memvault.core.models import ROLES, Message
from memvault.core.redaction import refuse_secret
from memvault.core.times import parse_time

MAX_ID_CHARS = 200


def message_from(raw: object, now: float, where: str = "message") -> Message | None:
    """``raw`` as a ``Message``, or None when it is marked ``"memory": false``.

    A missing timestamp means ``now``; a missing id gets one assigned; ``metadata`` is an object
    kept with the message. Unknown fields are ignored."""
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{where} must be an object")
    remember = raw.get("memory", True)
    if not isinstance(remember, bool):
        raise InvalidField(f"{where}.memory must be true or false")
    role = raw.get("role")
    if role not in ROLES:
        raise InvalidField(f"{where}.role must be one of {', '.join(ROLES)}, got {str(role)[:40]!r}")
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        raise InvalidField(f"{where}.content must be non-empty text")
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        raise InvalidField(f"{where}.model must be text")
    timestamp = parse_time(raw.get("timestamp"), f"{where}.timestamp")
    metadata = metadata_text(raw.get("metadata"), f"{where}.metadata")
    if not remember:
        return None
    return Message(
        role=str(role),
        content=content,
        timestamp=now if timestamp is None else timestamp,
        id=_message_id(raw.get("id"), where),
        model=model,
        metadata=metadata,
    )


def messages_from(raws: object, now: float, metadata: object = None) -> list[Message | None]:
    """Every message of a list, in order (None where one is not to be remembered); any bad one
    refuses the whole list before anything is stored. ``metadata``, given once for the batch, is
    kept with every message beneath the message's own keys; its ``timestamp`` and ``model`` stand
    in for a message that gives none."""
    if not isinstance(raws, Sequence) or isinstance(raws, str | bytes):
        raise InvalidInput("messages must be a list")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidField("metadata must be an object")
    return [
        message_from(_with_batch(raw, metadata), now, f"messages[{index}]") for index, raw in enumerate(raws)
    ]


def _with_batch(raw: object, metadata: Mapping[str, object] | None) -> object:
    if not metadata or not isinstance(raw, Mapping):
        return raw
    own = raw.get("metadata")
    if own is not None and not isinstance(own, Mapping):
        return raw  # refused by message_from, naming the message
    shared = {name: metadata[name] for name in ("timestamp", "model") if name in metadata and raw.get(name) is None}
    return {**raw, **shared, "metadata": {**metadata, **(own or {})}}


def _message_id(value: object, where: str) -> str:
    if value is None or value == "":
        return uuid.uuid4().hex
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidField(f"{where}.id must be text")
    text = str(value)
    if len(text) > MAX_ID_CHARS or not text.isprintable():
        raise InvalidField(f"{where}.id must be at most {MAX_ID_CHARS} printable characters")
    refuse_secret(f"{where}.id", text)
    return text

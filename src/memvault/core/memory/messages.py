"""The one input normaliser: a raw message from any surface (HTTP, RPC, MCP, CLI, import) becomes a
``Message``, under the same rules everywhere (``MESSAGE``, which the API's documents show too)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from memvault.core.contract import Choice, Flag, Identifier, JsonObject, Moment, Spec, Text
from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.memory.metadata import MAX_METADATA_CHARS, metadata_text
from memvault.core.models import ROLES, Message

MESSAGE = Spec("MessageIn", (
    Choice("role", options=ROLES, required=True),
    Text("content", required=True),
    Moment("timestamp", "Epoch seconds or ISO 8601 (naive means UTC); defaults to now."),
    Identifier("id", "Your id (1 to 200 printable characters); one is assigned if absent.", stored=True,
               empty_is_absent=True),
    Flag("memory", "false: accepted, never stored.", default=True),
    Text("model", blank=True),
    JsonObject("metadata", f"An object kept with the message and returned when memory is read (at most "
                           f"{MAX_METADATA_CHARS} characters as JSON)."),
))


def message_from(raw: object, now: float, where: str = "message") -> Message | None:
    """``raw`` as a ``Message``, or None when it is marked ``"memory": false``.

    A missing timestamp means ``now``; a missing id gets one assigned; ``metadata`` is an object
    kept with the message. Unknown fields are ignored."""
    values = MESSAGE.values(raw, where)
    metadata = metadata_text(values["metadata"], f"{where}.metadata")
    if not values["memory"]:
        return None
    return Message(
        role=values["role"],
        content=values["content"],
        timestamp=now if values["timestamp"] is None else values["timestamp"],
        id=values["id"] or uuid.uuid4().hex,
        model=values["model"],
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

"""Messages carried out of a vault and into one again: the records ``memvault export`` writes and
``memvault import`` reads back, and the message lines of a backup (``core/operations/backup.py``), which the
restore reads with the same parser.

A record is one message as ``POST /v1/memory`` takes it (``role``, ``content``, ``timestamp``,
``id``, ``model``, ``metadata``, ``memory``), plus ``vault`` (``core`` or ``session:<id>``) and
``said_again``: the other ids the same text was said under, the last time at ``last_said``. An
export writes its pending messages so (``"type": "pending"``), its stored messages in the shape of
their row (``"type": "message"``: the text in ``text``, the id in ``source_ids``, first and last
said in ``ts_start`` and ``ts_end``) and the chunks cut from them (``"type": "chunk"``: derived, so
an import skips them and cuts its own). Messages go back in the order the vault took them, so the
chunks cut again hold the same conversation in the same order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.contract import MAX_ID_CHARS, check_id, check_stored_id
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.memory.messages import message_from
from memvault.core.memory.metadata import metadata_value
from memvault.core.memory.write import store_conversation
from memvault.core.models import MemoryRow, Message, MessagePage
from memvault.core.times import parse_time

CORE = "core"
SESSION_PREFIX = "session:"
RECORD_TYPES = ("pending", "message", "chunk")


@dataclass(frozen=True)
class HeldMessage:
    """One message to put into a vault: the message, and the same message under each other id it
    was said again under (at the last time it was)."""

    session_id: str | None
    message: Message
    said_again: tuple[Message, ...] = ()


def vault_label(name: str) -> str:
    """``core`` or ``session:<id>``: a vault's name without its key."""
    return name.partition(":")[2]


def _session_of_label(label: object, where: str) -> str | None:
    if label == CORE:
        return None
    session = label.removeprefix(SESSION_PREFIX) if isinstance(label, str) and label.startswith(SESSION_PREFIX) else ""
    try:
        check_id(session, f"{where}.vault")
    except InvalidField:
        raise InvalidField(
            f"{where}.vault must be {CORE!r} or 'session:<id>' (an id of 1 to {MAX_ID_CHARS} printable characters)"
        ) from None
    return check_stored_id(session, f"{where}.vault")


def message_record(message: Message, said_again: Sequence[str] = (), last_said: float | None = None) -> dict[str, Any]:
    """The plain record of a message (as an import or a restore reads it)."""
    record: dict[str, Any] = {**message.to_dict(), "metadata": metadata_value(message.metadata)}
    if said_again:
        record["said_again"] = list(said_again)
        record["last_said"] = message.timestamp if last_said is None else last_said
    return record


def page_messages(page: MessagePage) -> Iterator[tuple[Message, list[str], float]]:
    """The messages of a page in order (stored, then pending), each with its other ids and the last
    time it was said."""
    for row in page.rows:
        message = Message(role=row.role, content=row.text, timestamp=row.ts_start, id=row.source_ids[0],
                          model=row.model, metadata=row.metadata)
        yield message, page.said_again.get(message.id, []), row.ts_end
    for message in page.pending:
        yield message, page.said_again.get(message.id, []), message.timestamp


def export_records(page: MessagePage, label: str) -> Iterator[dict[str, Any]]:
    """A page as ``memvault export`` writes it: stored messages in their row's shape, then pending ones."""
    for row in page.rows:
        yield {"type": "message", "vault": label, **row.to_dict(), "embedding": None,
               "metadata": metadata_value(row.metadata), "said_again": page.said_again.get(row.source_ids[0], [])}
    for message in page.pending:
        yield {"type": "pending", "vault": label, **message_record(message),
               "said_again": page.said_again.get(message.id, [])}


def chunk_record(row: MemoryRow, label: str) -> dict[str, Any]:
    return {"type": "chunk", "vault": label, **row.to_dict(), "embedding": None}


def held_from(raw: object, now: float, where: str, session_id: str | None = None) -> HeldMessage | None:
    """A record as the message to store (None for a chunk, or a message marked ``"memory": false``).
    ``session_id`` is the vault of a record that names none; a record naming another is refused."""
    if session_id is not None:
        check_stored_id(session_id, "session_id")
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{where} must be an object")
    kind = raw.get("type", "pending")
    if kind not in RECORD_TYPES:
        raise InvalidField(f"{where}.type must be one of {', '.join(RECORD_TYPES)}")
    if kind == "chunk":
        return None
    session = session_id
    if raw.get("vault") is not None:
        session = _session_of_label(raw["vault"], where)
        if session_id is not None and session != session_id:
            raise InvalidInput(f"{where} belongs to vault {raw['vault']!r}, not to session {session_id!r}")
    fields = _stored_fields(raw, where) if kind == "message" else dict(raw)
    fields["metadata"] = _metadata_object(fields.get("metadata"), where)
    message = message_from(fields, now, where)
    if message is None:
        return None
    again = raw.get("said_again") or []
    if not isinstance(again, list):
        raise InvalidField(f"{where}.said_again must be a list of ids")
    last = parse_time(raw.get("ts_end" if kind == "message" else "last_said"), f"{where}.last_said")
    moment = message.timestamp if last is None else last
    repeats = tuple(_repeat(fields, alias, moment, now, f"{where}.said_again[{i}]") for i, alias in enumerate(again))
    return HeldMessage(session, message, repeats)


def _stored_fields(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    ids = raw.get("source_ids")
    if not isinstance(ids, list) or len(ids) != 1:
        raise InvalidField(f"{where}.source_ids must hold the one id of the message")
    return {"role": raw.get("role"), "content": raw.get("text"), "timestamp": raw.get("ts_start"), "id": ids[0],
            "model": raw.get("model"), "metadata": raw.get("metadata")}


def _metadata_object(value: object, where: str) -> object:
    # Exports written before metadata was an object carried its JSON text.
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise InvalidField(f"{where}.metadata must be an object") from exc


def _repeat(fields: Mapping[str, Any], alias: object, moment: float, now: float, where: str) -> Message:
    if not isinstance(alias, str | int) or isinstance(alias, bool) or alias == "":
        raise InvalidField(f"{where} must be an id")
    repeated = message_from({**fields, "id": alias, "timestamp": moment, "memory": True}, now, where)
    if repeated is None:
        raise InvalidField(f"{where} must be an id")
    return repeated


async def store_held(
    deps: Deps, key_id: str, held: Sequence[HeldMessage], batch: int, progress: Callable[[int], None] | None = None
) -> int:
    """Store messages vault by vault, each vault's in the order given, then the occurrences said
    again under other ids (so a stored row keeps its first time and takes the last). Whatever is
    stored already (the same id and text) is not stored twice, so an interrupted run repeated
    completes the work. Returns the messages newly stored."""
    by_vault: dict[str | None, list[HeldMessage]] = {}
    for entry in held:
        by_vault.setdefault(entry.session_id, []).append(entry)
    accepted = 0
    for session_id, entries in by_vault.items():
        for start in range(0, len(entries), max(1, batch)):
            part = entries[start : start + batch]
            accepted += (await store_conversation(deps, key_id, [e.message for e in part], session_id)).messages_accepted
            if progress is not None:
                progress(len(part))
        repeats = [r for e in entries for r in e.said_again]
        for start in range(0, len(repeats), max(1, batch)):
            await store_conversation(deps, key_id, repeats[start : start + batch], session_id)
    return accepted

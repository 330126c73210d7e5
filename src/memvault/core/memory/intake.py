"""Which of the messages a write brings are new to a vault, inside the write's transaction. An id
names one message per vault: sent again with the same role and text it is a re-send, stored once;
with other text it is a conflict. A new id whose text (normalised) the vault already holds from
the same role is that message said again: it counts one more occurrence, and its id becomes
another name of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memvault.core.errors import Conflict
from memvault.core.memory import changelog
from memvault.core.memory.rows import message_hash
from memvault.core.models import Message
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders

_ID_LOOKUPS = (
    "SELECT message_id AS v FROM rows WHERE message_id IN ({})",
    "SELECT id AS v FROM buffer WHERE id IN ({})",
    "SELECT message_id AS v FROM aliases WHERE message_id IN ({})",
)
_TEXT_LOOKUPS = (
    "SELECT content_hash AS v FROM rows WHERE kind = 'message' AND content_hash IN ({})",
    "SELECT content_hash AS v FROM buffer WHERE content_hash IN ({})",
)


def _stored_message(sql: SyncSql, message_id: str) -> tuple[str, str] | None:
    """Role and text stored under a message id (its own, or one it repeated), in a row or in
    the buffer."""
    found = sql.execute(
        "SELECT role, text FROM rows WHERE kind = 'message' AND message_id IN "
        "(?, (SELECT canonical FROM aliases WHERE message_id = ?)) "
        "UNION ALL SELECT role, content AS text FROM buffer WHERE id IN "
        "(?, (SELECT canonical FROM aliases WHERE message_id = ?)) LIMIT 1",
        (message_id, message_id, message_id, message_id),
    )
    return (str(found[0]["role"]), str(found[0]["text"])) if found else None


def new_messages(sql: SyncSql, messages: Sequence[Message]) -> list[tuple[Message, int]]:
    """The messages not stored yet, each with how often this batch said it; re-sends are skipped,
    a conflict raises, and a text the vault holds counts one more occurrence there."""
    seen: dict[str, tuple[str, str]] = {}
    fresh: dict[str, tuple[Message, int]] = {}
    digests = {message.id: message_hash(message) for message in messages}
    # Two lookups for the whole batch; a message only costs more when its id or text is known.
    known_ids = _present(sql, _ID_LOOKUPS, list(digests))
    known_texts = _present(sql, _TEXT_LOOKUPS, list(set(digests.values())))
    for message in messages:
        earlier = seen.get(message.id) or (_stored_message(sql, message.id) if message.id in known_ids else None)
        if earlier is not None:
            if earlier != (message.role, message.content):
                raise Conflict(f"message id {message.id!r} is already stored with other content")
            continue
        seen[message.id] = (message.role, message.content)
        digest = digests[message.id]
        if digest in fresh:
            first, count = fresh[digest]
            fresh[digest] = (replace(first, timestamp=max(first.timestamp, message.timestamp)), count + 1)
            _said_again(sql, digest, message, first.id)
        elif digest not in known_texts or not _said_again(sql, digest, message, None):
            fresh[digest] = (message, 1)
    return list(fresh.values())


def _present(sql: SyncSql, lookups: Sequence[str], values: Sequence[str]) -> set[str]:
    """Which of ``values`` each ``lookup`` (a SELECT of one column, ``{}`` for the IN list) finds."""
    found: set[str] = set()
    for batch in in_batches(list(values)):
        for lookup in lookups:
            found.update(str(r["v"]) for r in sql.execute(lookup.format(placeholders(len(batch))), batch))
    return found


def _said_again(sql: SyncSql, digest: str, message: Message, canonical: str | None) -> bool:
    """Count ``message`` as one more occurrence of the stored message with its text, if there
    is one (or of ``canonical``, earlier in the same batch); whether it was."""
    if canonical is None:
        row = sql.execute(
            "SELECT id, message_id FROM rows WHERE kind = 'message' AND content_hash = ?", (digest,)
        )
        if row:
            sql.execute(
                "UPDATE rows SET occurrences = occurrences + 1, ts_end = max(ts_end, ?) WHERE id = ?",
                (message.timestamp, row[0]["id"]),
            )
            changelog.log(sql, changelog.ROWS, [str(row[0]["id"])])
            canonical = str(row[0]["message_id"])
        else:
            pending = sql.execute("SELECT id FROM buffer WHERE content_hash = ?", (digest,))
            if not pending:
                return False
            sql.execute(
                "UPDATE buffer SET occurrences = occurrences + 1, ts = max(ts, ?) WHERE id = ?",
                (message.timestamp, pending[0]["id"]),
            )
            canonical = str(pending[0]["id"])
    sql.execute(
        "INSERT INTO aliases (message_id, canonical) VALUES (?, ?) ON CONFLICT (message_id) DO NOTHING",
        (message.id, canonical),
    )
    return True

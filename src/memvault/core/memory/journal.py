"""The journal of routed calls (``routed_calls``, migration 0019): what a call the router relayed
still owes the stores, kept in the shared database until it is paid.

A call's row is opened beside its receipt while the provider answers, holding the usage so far
(the call, the memory injected, its recall's embeddings). Before the answer's last bytes go to the
client, the row takes the turn to store (already through the secret gate) and the provider's
counts. Settling the row stores the turn under its ids, then in one batch adds the usage to the
key's day, completes the receipt and deletes the row; the usage and the receipt change only while
the row exists, so a row settled twice counts once. Forgetting a turn's message, or clearing its
vault, takes the text out of the row and marks the message forgotten there (migration 0021): a
settled row then stores nothing of it. The mark is what reaches a turn the row does not hold: the
answer's write leaves a marked message out of the row (a call still being answered), and a turn
its process stores from memory (over ``MAX_JOURNALED_BYTES``, or its answer's write failed) is
stored without what is marked, then what was marked while it was stored is forgotten again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memvault.core.models import Message
from memvault.core.ports import Database
from memvault.core.receipts.model import Usage
from memvault.core.receipts.store import Statement, completion
from memvault.core.sql import Row, in_batches, placeholders
from memvault.core.usage.ledger import usage_statement
from memvault.core.usage.meter import COUNTS, CallUsage

_TURN_ID = re.compile(r"rt-([0-9A-Za-z]+)-([ua])")
_COLUMNS = "id, key_id, session_id, created_at, model, receipt_id, usage, answered, forwarding_ms, " \
    "provider_tokens, question, answer"
_READ = _COLUMNS + ", question_forgotten, answer_forgotten"
# A turn's two messages: the id's suffix, the column holding the text, the column marking it forgotten.
_PARTS = (("u", "question", "question_forgotten"), ("a", "answer", "answer_forgotten"))


@dataclass(frozen=True)
class PendingCall:
    """One routed call as the journal holds it. ``id`` is the call's turn id: its messages are
    ``rt-<id>-u`` and ``rt-<id>-a``, and its receipt (when it has one) has the same id."""

    id: str
    key_id: str
    created_at: float
    session_id: str | None
    model: str | None
    usage: CallUsage  # what the call used before its turn is stored
    receipt_id: str | None = None
    answered: bool = False  # the answer's end went out to the client
    forwarding_ms: float | None = None
    provider_tokens: tuple[int | None, int | None] = (None, None)  # as the answer reported them
    question: Message | None = None
    answer: Message | None = None
    forgotten: frozenset[str] = frozenset()  # the turn's message ids a forget or a clear marked

    @property
    def turn(self) -> list[Message]:
        return [m for m in (self.question, self.answer) if m is not None]

    def marked(self, forgotten: frozenset[str]) -> PendingCall:
        """This call with the messages ``forgotten`` names marked forgotten, and out of its turn."""
        kept = [m if m is not None and m.id not in forgotten else None for m in (self.question, self.answer)]
        return replace(self, question=kept[0], answer=kept[1], forgotten=self.forgotten | forgotten)


def while_pending(call_id: str) -> Statement:
    """The condition under which settling a call still changes anything."""
    return "EXISTS (SELECT 1 FROM routed_calls WHERE id = ?)", (call_id,)


def opening(call: PendingCall) -> Statement:
    return (f"INSERT INTO routed_calls ({_COLUMNS}) VALUES ({placeholders(12)})", _values(call))


def answering(call: PendingCall) -> Statement:
    """The row as the answer left it, whether or not it was opened; a message a forget or a clear
    marked before the answer came stays out of it."""
    changed = [f"{name} = excluded.{name}" for name in ("usage", "answered", "forwarding_ms", "provider_tokens")]
    changed += [f"{column} = CASE WHEN routed_calls.{mark} = 0 THEN excluded.{column} END" for _, column, mark in _PARTS]
    return (f"INSERT INTO routed_calls ({_COLUMNS}) VALUES ({placeholders(12)}) ON CONFLICT (id) DO UPDATE SET "
            + ", ".join(changed), _values(call))


def settling(call: PendingCall, usage: CallUsage, pending: bool) -> list[Statement]:
    """The batch that pays a call: its usage (the turn's storing included) on the day it was made,
    its receipt's usage once it was answered, and the end of its row. With ``pending`` the batch
    changes nothing unless the row is still there (another settling got to it first)."""
    condition = while_pending(call.id) if pending else None
    statements = [usage_statement(call.key_id, call.created_at, call.model, usage, condition)]
    if call.receipt_id is not None and call.answered:
        statements.append(completion(call.receipt_id, Usage(*call.provider_tokens), call.forwarding_ms or 0.0,
                                     condition))
    if pending:
        statements.append(("DELETE FROM routed_calls WHERE id = ?", (call.id,)))
    return statements


async def read(db: Database, call_id: str) -> PendingCall | None:
    rows = await db.query(f"SELECT {_READ} FROM routed_calls WHERE id = ?", (call_id,))
    return _call(rows[0]) if rows else None


async def leftovers(
    db: Database, answered_before: float, opened_before: float, limit: int, after: tuple[float, str] = (0.0, "")
) -> list[PendingCall]:
    """Rows nobody settled, oldest first from after ``after`` (a row's ``(created_at, id)``):
    answered before ``answered_before``, or opened before ``opened_before`` and never answered (a
    call that died before its answer's end)."""
    rows = await db.query(
        f"SELECT {_READ} FROM routed_calls WHERE ((answered = 1 AND created_at < ?) OR created_at < ?) "
        "AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT ?",
        (answered_before, opened_before, after[0], after[0], after[1], limit))
    return [_call(row) for row in rows]


async def forget_turns(db: Database, key_id: str, ids: Sequence[str], session_id: str | None) -> set[str]:
    """Take forgotten messages out of the key's rows (of ``session_id``'s vault, when given) and
    mark them forgotten there; the message ids found: held by a row, or of a row not yet answered
    (its turn is on its way from the process's memory, and will not be stored)."""
    found: set[str] = set()
    for part, column, mark in _PARTS:
        turns = {match.group(1): text for text in ids if (match := _TURN_ID.fullmatch(text)) and match.group(2) == part}
        for batch in in_batches(sorted(turns)):
            which = f"key_id = ? AND id IN ({placeholders(len(batch))}) AND ({column} IS NOT NULL OR {mark} = 0)"
            params: list[Any] = [key_id, *batch]
            if session_id is not None:
                which += " AND session_id = ?"
                params.append(session_id)
            rows = await db.query(f"SELECT id, {column} IS NOT NULL AS held, answered FROM routed_calls WHERE {which}",
                                  params)
            if rows:
                await db.execute(f"UPDATE routed_calls SET {column} = NULL, {mark} = 1 WHERE {which}", params)
            found.update(turns[str(row["id"])] for row in rows if row["held"] or not row["answered"])
    return found


async def clear_turns(db: Database, key_id: str, session_id: str | None) -> None:
    """A cleared key (or session) keeps none of its unsettled turns' text, nor gets the text of
    those it does not hold yet; their usage stays owed."""
    which = "key_id = ?" + ("" if session_id is None else " AND session_id = ?")
    params = (key_id,) if session_id is None else (key_id, session_id)
    erased = ", ".join(f"{column} = NULL, {mark} = 1" for _, column, mark in _PARTS)
    await db.execute(f"UPDATE routed_calls SET {erased} WHERE {which}", params)


def answered_call(call: PendingCall, messages: Sequence[Message], input_tokens: int | None,
                  output_tokens: int | None, usage: CallUsage, forwarding_ms: float) -> PendingCall:
    """``call`` once its answer's end went out, holding the turn it stores."""
    question = next((m for m in messages if m.role == "user"), None)
    answer = next((m for m in messages if m.role != "user"), None)
    return replace(call, answered=True, usage=usage, forwarding_ms=forwarding_ms,
                   provider_tokens=(input_tokens, output_tokens), question=question, answer=answer)


def _values(call: PendingCall) -> tuple[Any, ...]:
    return (
        call.id, call.key_id, call.session_id, call.created_at, call.model, call.receipt_id,
        json.dumps(call.usage.counts()), int(call.answered), call.forwarding_ms,
        json.dumps(list(call.provider_tokens)), _message_text(call.question), _message_text(call.answer),
    )


def _message_text(message: Message | None) -> str | None:
    return None if message is None else json.dumps(message.to_dict(), ensure_ascii=False)


def _message(text: object) -> Message | None:
    return None if text is None else Message.from_dict(json.loads(str(text)))


def _call(row: Row) -> PendingCall:
    counts = json.loads(str(row["usage"]))
    tokens = json.loads(str(row["provider_tokens"] or "[null, null]"))
    forgotten = frozenset(f"rt-{row['id']}-{part}" for part, _, mark in _PARTS if row[mark])
    return PendingCall(
        id=str(row["id"]), key_id=str(row["key_id"]), created_at=float(row["created_at"]),
        session_id=row["session_id"], model=row["model"],
        usage=CallUsage(**{name: int(counts.get(name, 0)) for name in COUNTS}),
        receipt_id=row["receipt_id"], answered=bool(row["answered"]), forwarding_ms=row["forwarding_ms"],
        provider_tokens=(tokens[0], tokens[1]), question=_message(row["question"]), answer=_message(row["answer"]),
        forgotten=forgotten,
    )

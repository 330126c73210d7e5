"""The memory work of one routed call around its relay, kept durable by the journal (``journal``):
the call is opened beside its receipt while the provider answers, answered just before the
answer's end goes out to the client, and settled in the background once the relay is over.
What a crash leaves in the journal is settled later the same way (``settle_leftovers``), so a call
whose answer reached the client never loses its turn, its usage or its receipt's usage."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import replace
from typing import Literal

from memvault.core.cpu import gated_off_loop
from memvault.core.deps import Deps
from memvault.core.errors import MemvaultError, WriteRaced
from memvault.core.memory import journal
from memvault.core.memory.accounting import stored_usage
from memvault.core.memory.chat_calls import STATUS_OK, Conversation, MemoryOptions, PreparedMemory, Reply, turn_messages
from memvault.core.memory.journal import PendingCall
from memvault.core.memory.write import forget, gated, message_chars, store_conversation
from memvault.core.models import Message
from memvault.core.receipts.record import keep_routed, new_receipt_id
from memvault.core.usage.meter import CallUsage, Meter, metering

log = logging.getLogger("memvault.router")

# How far the journal's row has got: not written, opened (usage so far), answered (the turn too).
Written = Literal["none", "open", "answered"]
# A turn larger than this is stored without passing through the journal (D1 keeps rows under 2 MB).
MAX_JOURNALED_BYTES = 1_000_000
# How long the answer's end waits for its row; past it the answer goes out and the row lands later.
ANSWER_WAIT_SECONDS = 2.0
LEFTOVERS_PAGE = 100
# A call with no answer yet may still be streaming: the nightly pass leaves it this long.
OPEN_CALL_SECONDS = 6 * 3600.0
# An answered call is settled by its own process within moments of its answer.
ANSWERED_CALL_SECONDS = 600.0


class RoutedCall:
    """One routed call of a memory key: ``open`` while the provider answers, ``answer`` before the
    answer's end goes out, then ``settle`` once (in the background)."""

    def __init__(self, deps: Deps, key_id: str, conversation: Conversation, options: MemoryOptions,
                 memory: PreparedMemory, recalled: bool, recall_meter: Meter) -> None:
        self.deps, self.conversation, self.options = deps, conversation, options
        usage = CallUsage(calls=1, memory_tokens=memory.tokens, searches=int(recalled and memory.status == STATUS_OK))
        # What the call used before the provider answered; the answer's counts are added to it once.
        self._usage = usage + recall_meter.usage
        self.call = PendingCall(new_receipt_id(), key_id, deps.clock(), options.session_id, conversation.model,
                                self._usage)
        self.written: Written = "none"
        self._answering: asyncio.Future[None] | None = None

    async def open(self, provider: str, memory: PreparedMemory) -> str | None:
        """Keep the call's receipt and open its row, in one batch; the receipt's id, or None when
        neither could be kept (the call goes on without them)."""
        call = replace(self.call, receipt_id=self.call.id)
        if await keep_routed(self.deps, call.id, call.key_id, provider, memory.query, call.session_id,
                             self.options.context_limit, memory.found, memory.retrieval_ms, memory.injected,
                             memory.status, memory.facts, also=[journal.opening(call)]):
            self.call, self.written = call, "open"
            return call.id
        return None

    async def answer(self, reply: Reply | None, forwarding_ms: float) -> None:
        """Make the answer durable before its end reaches the client: the turn it stores (through
        the secret gate) and the provider's counts go into the row. Never raises; waits at most
        ``ANSWER_WAIT_SECONDS``."""
        try:
            self.call = await self._answered(reply, forwarding_ms)
        except Exception as exc:  # the answer goes out whatever happens here; the call settles unanswered
            log.warning("could not read a routed answer for the journal: %s", type(exc).__name__)
            self.call = replace(self.call, answered=True)
            return
        if sum(len(m.content.encode("utf-8", "replace")) for m in self.call.turn) > MAX_JOURNALED_BYTES:
            return
        self._answering = asyncio.ensure_future(self._write_answer(self.call))
        try:
            await asyncio.wait_for(asyncio.shield(self._answering), ANSWER_WAIT_SECONDS)
        except TimeoutError:
            log.warning("the journal took too long; the answer goes out before its row")

    async def settle(self, reply: Reply | None, delivered: bool, forwarding_ms: float) -> None:
        """Background, once the relay is over: pay what the call owes (``delivered``: its answer
        reached the client, ``reply`` is what it said)."""
        if self._answering is not None:
            await asyncio.wait((self._answering,))
        elif delivered and not self.call.answered:
            self.call = await self._answered(reply, forwarding_ms)
        elif not self.call.answered and reply is not None:
            # Not delivered (the client left, upstream failed): nothing is stored, but the tokens
            # the provider said it used so far (Anthropic's and Gemini's first events) are owed.
            self.call = replace(self.call, usage=self._usage + _provider_counts(reply), forwarding_ms=forwarding_ms,
                                provider_tokens=(reply.input_tokens, reply.output_tokens))
        await settle(self.deps, self.call, self.written)

    async def _answered(self, reply: Reply | None, forwarding_ms: float) -> PendingCall:
        messages: list[Message] = []
        if reply is not None and reply.complete:
            kinds: list[str] = []
            turn = turn_messages(self.conversation, reply, self.options, self.deps.clock(), self.call.id)
            # The user's message is the reply to what was said before it; the answer, to the user's.
            before = {"user": self.conversation.said_before_last_user(),
                      "assistant": next((message.content for message in turn if message.role == "user"), None)}
            messages = await gated_off_loop(
                self.deps, lambda: [gated(message, kinds, before.get(message.role)) for message in turn],
                sum(message_chars(message) for message in turn))
        counts = CallUsage() if reply is None else _provider_counts(reply)
        tokens = (None, None) if reply is None else (reply.input_tokens, reply.output_tokens)
        return journal.answered_call(self.call, messages, *tokens, self._usage + counts, forwarding_ms)

    async def _write_answer(self, call: PendingCall) -> None:
        try:
            await self.deps.db.execute(*journal.answering(call))
        except Exception as exc:  # the client gets its answer; the call settles from memory
            log.warning("could not journal a routed answer: %s", type(exc).__name__)
            return
        self.written = "answered"


def _provider_counts(reply: Reply) -> CallUsage:
    return CallUsage(input_tokens=reply.input_tokens or 0, output_tokens=reply.output_tokens or 0,
                     cached_tokens=reply.cached_tokens or 0)


async def settle(deps: Deps, call: PendingCall, written: Written) -> None:
    """Store the call's turn, then add its usage, complete its receipt and end its row in one
    batch. The row is read again first, since forgetting and clearing reach the turn there: an
    answered row holds the turn as they left it; a row without the turn (``call`` holds it) marks
    what they took. A row whose turn could not be stored stays, to be settled later.

    A call with no row (``written == "none"``: its receipt and row could not be kept) is stored
    with nothing to check: no receipt header went out with its answer, so a client cannot name its
    messages (``rt-<random id>-u``/``-a``) before they are in the vault, where forget reaches them.
    A clear running while such a turn is stored can come before it (docs/memory.md, Forget)."""
    if written != "none":
        current = await journal.read(deps.db, call.id)
        if written == "answered":
            if current is None:
                return  # settled already
            call = current
        elif current is not None:
            call = call.marked(current.forgotten)
    stored: list[Message] = []
    with metering() as meter:
        try:
            if call.turn:
                await _stored(deps, call)
                stored = call.turn
            if written != "none" and (stored or call.forgotten):
                await _forget_again(deps, call, stored)
        except Exception as exc:
            log.warning("storing the routed turn failed: %s", type(exc).__name__)
            # A store that may work later keeps the row (one another write raced, too); a turn the
            # store refuses never will.
            if written != "none" and (isinstance(exc, WriteRaced)
                                      or not (isinstance(exc, MemvaultError) and exc.status < 500)):
                return
    usage = call.usage + stored_usage(stored) + meter.usage
    try:
        await deps.db.batch(journal.settling(call, usage, pending=written != "none"))
    except Exception as exc:
        log.warning("recording a routed call's usage failed: %s", type(exc).__name__)


async def _stored(deps: Deps, call: PendingCall) -> None:
    """Store the call's turn; a write another one raced is planned again once, seeing what the
    other did (another process writing the same new vault, say)."""
    try:
        await store_conversation(deps, call.key_id, call.turn, session_id=call.session_id)
    except WriteRaced:
        await store_conversation(deps, call.key_id, call.turn, session_id=call.session_id)


async def _forget_again(deps: Deps, call: PendingCall, stored: list[Message]) -> None:
    """Forget the messages of ``call``'s turn that a forget or a clear marked on its row while the
    turn was being stored (that forget ran before they were in the vault, and found none), and
    those marked before: a settling that stopped here before this (the row stayed) may have
    stored them."""
    now = await journal.read(deps.db, call.id)
    if now is None:
        return
    taken = sorted(now.forgotten & ({m.id for m in stored} | call.forgotten))
    if taken:
        await forget(deps, call.key_id, taken, call.session_id)


async def settle_leftovers(
    deps: Deps, answered_before: float, opened_before: float, limit: int, after: tuple[float, str] = (0.0, "")
) -> list[PendingCall]:
    """Settle up to ``limit`` rows a crash left in the journal, oldest first after ``after`` (see
    ``journal.leftovers``); the rows tried. A row that fails stays for a later pass."""
    tried: list[PendingCall] = []
    while len(tried) < limit:
        calls = await journal.leftovers(deps.db, answered_before, opened_before,
                                        min(LEFTOVERS_PAGE, limit - len(tried)), after)
        for call in calls:
            await _guarded(settle(deps, call, "answered" if call.answered else "open"))
        tried += calls
        if len(calls) < LEFTOVERS_PAGE:
            break
        after = (calls[-1].created_at, calls[-1].id)
    return tried


async def _guarded(work: Awaitable[None]) -> None:
    try:
        await work
    except Exception as exc:  # one row must not stop the others; it stays for the next pass
        log.warning("settling a journaled call failed: %s", type(exc).__name__)

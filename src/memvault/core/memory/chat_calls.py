"""Memory around one chat call the memory router forwards to a provider, for every provider route.

``prepare`` recalls what matters for the caller's last message and renders it as one context
block; ``record`` stores the finished turn. Provider codecs translate formats into the
``Conversation`` and ``Reply`` shapes defined here, so this module never sees a provider's JSON.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from memvault.core.characters import repaired
from memvault.core.contract import Choice, Flag, Identifier, Spec, WholeNumber
from memvault.core.deps import Deps
from memvault.core.memory.message_facts import line_tokens
from memvault.core.memory.read.page import read_memory
from memvault.core.memory.read.search import search_memory
from memvault.core.memory.recall_query import recall_query
from memvault.core.memory.windows import MIN_CLIPPED_TOKENS
from memvault.core.models import Message, SearchItem, SearchResult
from memvault.core.receipts.model import FactRecalled
from memvault.core.redaction import redact
from memvault.core.tokens import clip_to_tokens, estimate_tokens

log = logging.getLogger("memvault.router")

MODES = ("auto", "read", "write", "off")
STATUS_OK, STATUS_DEGRADED, STATUS_OFF = "ok", "degraded", "off"
# How many of a vault's newest messages are looked through for the user's last turn.
LAST_USER_LOOKBACK = 20
_DAY = re.compile(r"\d{4}-\d\d-\d\d")
# The moments a few dozen searches return (rendering a day is a calendar computation).
REMEMBERED_DAYS = 1024
CONTEXT_HEADING = "Memory of this user's earlier conversations, by day (their own words unless marked; may be out of date):"


OPTIONS = Spec("MemoryOptions", (
    Choice("mode", options=MODES, any_case=True, default="auto"),
    WholeNumber("context_limit", least=0),
    Flag("store", default=True),
    Flag("store_response", default=True),
    Identifier("session_id", stored=True),
    Flag("brain", default=True),
))


@dataclass(frozen=True)
class MemoryOptions:
    mode: str
    store: bool
    store_response: bool
    context_limit: int
    session_id: str | None
    # For a key granted brain scopes: whether its brain facts are recalled beside its memory.
    brain: bool = True

    @property
    def reads(self) -> bool:
        return self.mode in {"auto", "read"} and self.context_limit > 0

    @property
    def writes(self) -> bool:
        return self.mode in {"auto", "write"} and self.store


def memory_options(given: Mapping[str, object], default_context_limit: int, labels: Mapping[str, str]) -> MemoryOptions:
    """A call's options from what its request set (text, as headers carry it, or plain values);
    ``labels`` names each option as the request set it, in errors."""
    values = OPTIONS.values(given, text=True, labels=labels)
    limit = values["context_limit"]
    return MemoryOptions(
        mode=values["mode"],
        store=values["store"],
        store_response=values["store_response"],
        context_limit=default_context_limit if limit is None else limit,
        session_id=values["session_id"],
        brain=values["brain"],
    )


@dataclass(frozen=True)
class Turn:
    """One message of the caller's conversation, reduced to its text. A ``tool`` turn is a tool
    call or a tool's result: no words of anyone's, but it shows the user turn before it was already
    being answered by an earlier call."""

    role: str  # "user" | "assistant" | "tool"
    text: str
    remember: bool = True


@dataclass(frozen=True)
class Conversation:
    turns: tuple[Turn, ...]
    model: str | None = None
    stream: bool = False
    # The call asks for the rest of an answer an earlier call began and stopped at a per-request
    # limit (Gemini's `continuationToken`): the same conversation, sent again.
    resumes_an_answer: bool = False

    def last_user(self) -> Turn | None:
        for turn in reversed(self.turns):
            if turn.role == "user":
                return turn
        return None

    def said_before_last_user(self) -> str | None:
        """The text of the turn just before the last user turn (what the user's message answers)."""
        for index in range(len(self.turns) - 1, 0, -1):
            if self.turns[index].role == "user":
                return self.turns[index - 1].text
        return None

    def continues_a_turn(self) -> bool:
        """Whether tool calls or results follow the last user turn: this call carries on a turn an
        earlier call began (an agent's tool loop), and that call already had the user's message.
        So does a call that resumes an answer."""
        if self.resumes_an_answer:
            return True
        for turn in reversed(self.turns):
            if turn.role in ("user", "tool"):
                return turn.role == "tool"
        return False

    def query(self) -> str:
        """What to recall for: the latest user text (a tool-result turn has none of its own), with
        the turns before it when it refers back to them."""
        return recall_query([(turn.role, turn.text) for turn in self.turns])


@dataclass(frozen=True)
class Reply:
    """What the provider answered, assembled from a response body or from stream events."""

    text: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    complete: bool = True
    # Of the input tokens, those the provider read from its prompt cache.
    cached_tokens: int | None = None


@dataclass(frozen=True)
class Recall:
    """A recall's context block and what went into it, for the call's receipt."""

    context: str
    count: int  # entries the block holds
    found: SearchResult | None = None  # the conversation search, best first
    injected: int = 0  # how many of found's items the block holds
    facts: tuple[FactRecalled, ...] = ()  # brain facts the block holds, for a key granted brain scopes


# Recalls for a query, leaving out the texts the request already holds.
Recaller = Callable[[str, Sequence[str]], Awaitable[Recall]]


@dataclass(frozen=True)
class PreparedMemory:
    context: str
    items: int
    tokens: int
    status: str
    retrieval_ms: float
    # What the recall found and what it searched for: the call's receipt is made of them.
    found: SearchResult | None = None
    query: str = ""
    receipt: str | None = None
    facts: tuple[FactRecalled, ...] = ()
    injected: int = 0  # how many of found's items went in


def off() -> PreparedMemory:
    return PreparedMemory("", 0, 0, STATUS_OFF, 0.0)


def degraded(retrieval_ms: float = 0.0) -> PreparedMemory:
    return PreparedMemory("", 0, 0, STATUS_DEGRADED, retrieval_ms)


def render_context(items: Sequence[SearchItem], limit_tokens: int | None = None) -> tuple[str, int]:
    """The context block and how many items it holds. Items are taken in rank order while the
    block stays within the limit (the first that does not fit is cut to what is left, then no
    more), and shown by day, oldest first, so each day's date is written once, a line each. Most
    of memory is what the user said, so only other speakers' lines carry a label, and no line a
    bullet: either on every line would cost a tenth of a small budget."""
    used = estimate_tokens(CONTEXT_HEADING)
    days: dict[str, list[tuple[float, str]]] = {}
    for item in items:
        day = _day_of(item.ts_end)
        opening = 0 if day in days else estimate_tokens(day)
        label = "" if item.role == "user" else f"{item.role}: "
        text = " ".join(item.text.split())
        cost = opening + line_tokens(label + text)
        if limit_tokens is not None and used + cost > limit_tokens:
            left = limit_tokens - used - opening - estimate_tokens(label)
            text = clip_to_tokens(text, left) if left >= MIN_CLIPPED_TOKENS else ""
            if text:
                days.setdefault(day, []).append((item.ts_end, label + text))
            break
        days.setdefault(day, []).append((item.ts_end, label + text))
        used += cost
    count = sum(len(lines) for lines in days.values())
    if not count:
        return "", 0
    blocks = [CONTEXT_HEADING]
    for day in sorted(days):
        blocks += [day, *(line for _, line in sorted(days[day], key=lambda entry: entry[0]))]
    return "\n".join(blocks), count


@lru_cache(maxsize=REMEMBERED_DAYS)
def _day_of(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).date().isoformat()


def context_lines(block: str) -> list[str]:
    """The remembered lines of a context block, without its heading and dates."""
    return [line for line in block.splitlines()[1:] if not _DAY.fullmatch(line)]


async def prepare(
    deps: Deps, key_id: str, conversation: Conversation, options: MemoryOptions, recall: Recaller | None = None
) -> PreparedMemory:
    """Recall memory for the caller's last message. Fails open: any failure reports ``degraded``.
    ``recall`` renders the block for a query in place of conversation memory alone (the joint
    recall of a key granted brain scopes, ``core/answers``)."""
    if not options.reads:
        return off() if options.mode == "off" else PreparedMemory("", 0, 0, STATUS_OK, 0.0)
    started = time.perf_counter()
    # Retrieval races its own stores; this guard only stops a hung store from holding the call.
    timeout = deps.settings.race_timeout_ms / 1000.0 + 1.0
    try:
        async with asyncio.timeout(timeout):  # no task of its own, unlike wait_for in 3.11
            query, recalled = await _recall(deps, key_id, conversation, options, recall)
    except Exception as exc:  # fail open: the chat call must go through without memory
        log.warning("memory retrieval failed, answering without memory: %s", type(exc).__name__)
        return degraded((time.perf_counter() - started) * 1000.0)
    elapsed = (time.perf_counter() - started) * 1000.0
    return PreparedMemory(recalled.context, recalled.count, estimate_tokens(recalled.context), STATUS_OK, elapsed,
                          recalled.found, query, facts=recalled.facts, injected=recalled.injected)


async def _recall(
    deps: Deps, key_id: str, conversation: Conversation, options: MemoryOptions, recall: Recaller | None
) -> tuple[str, Recall]:
    # A call holding no user text of its own (only tool outputs, in a chained response) goes on
    # from the user's last stored turn.
    query = conversation.query() or await last_stored_user_text(deps, key_id, options.session_id)
    if not query:
        return "", Recall("", 0)
    # The request says these itself: memory that repeats them would spend the budget twice.
    exclude = [turn.text for turn in conversation.turns]
    if not conversation.resumes_an_answer:
        return query, await _recalled(deps, key_id, query, options, recall, exclude)
    # What the model already said of the answer it resumes was stored as far as it went: recalled,
    # it would come back to the model as memory and change the prompt it resumes. The call that
    # began the answer stores it in the background, so it may land while this recall runs: read
    # again after it, and recall once more if it did.
    so_far = await answer_so_far(deps, key_id, options.session_id, conversation)
    recalled = await _recalled(deps, key_id, query, options, recall, exclude + so_far)
    landed = await answer_so_far(deps, key_id, options.session_id, conversation)
    if landed != so_far:
        recalled = await _recalled(deps, key_id, query, options, recall, exclude + landed)
    return query, recalled


async def _recalled(
    deps: Deps, key_id: str, query: str, options: MemoryOptions, recall: Recaller | None, exclude: list[str]
) -> Recall:
    if recall is not None:
        return await recall(query, exclude)
    result = await search_memory(
        deps, key_id, query, budget_tokens=options.context_limit, session_id=options.session_id, exclude=exclude,
    )
    context, count = render_context(result.items, options.context_limit)
    return Recall(context, count, result, count)


async def last_stored_user_text(deps: Deps, key_id: str, session_id: str | None) -> str:
    """The newest user message the key's vault (of ``session_id``) holds; "" when there is none
    among its newest messages."""
    for message in await read_memory(deps, key_id, session_id, LAST_USER_LOOKBACK, 0):
        if message["role"] == "user" and message["content"].strip():
            return str(message["content"])
    return ""


async def answer_so_far(deps: Deps, key_id: str, session_id: str | None, conversation: Conversation) -> list[str]:
    """The answer parts the vault holds after the newest user message, when that message is the
    conversation's last (the turn being resumed) as it was stored, through the secret gate; none
    otherwise."""
    last = conversation.last_user()
    if last is None:
        return []
    stored_as = redact(last.text, conversation.said_before_last_user()).text
    parts: list[str] = []
    for message in await read_memory(deps, key_id, session_id, LAST_USER_LOOKBACK, 0):
        if message["role"] == "user":
            return parts if message["content"] == stored_as else []
        parts.append(str(message["content"]))
    return []


def turn_messages(
    conversation: Conversation, reply: Reply, options: MemoryOptions, now: float, turn_id: str | None = None
) -> list[Message]:
    """The messages a finished turn stores: the caller's last message and the answer to it
    (``rt-<turn_id>-u`` and ``-a``; the call's receipt id, when it has one). A call that carries
    on a turn through tools stores its answer alone: the call that began the turn stored the
    user's message, and storing it at every step of a tool loop would count it said again each time.

    A last user message marked ``"memory": false`` is never stored, and neither is the answer
    to it, because answers routinely repeat what they answer."""
    last = conversation.last_user()
    if not options.writes or (last is not None and not last.remember):
        return []
    turn_id = turn_id or uuid.uuid4().hex
    messages = []
    # With no new user message (a call carrying tool outputs) the answer is stored alone.
    if last is not None and last.text.strip() and not conversation.continues_a_turn():
        messages.append(Message("user", last.text, now, f"rt-{turn_id}-u", conversation.model))
    if options.store_response and reply.complete and reply.text.strip():
        # A hair later than the question so the pair keeps its order in every store.
        messages.append(Message("assistant", repaired(reply.text), now + 0.001, f"rt-{turn_id}-a", conversation.model))
    return messages

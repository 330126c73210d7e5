"""What each operation of conversation memory takes, and the one parser of each: plain data as any
surface received it (a JSON body, query parameters, JS values over RPC, MCP arguments, argv)
becomes a typed command, or ``InvalidField`` naming the field. ``text=True`` says every value came
from a carrier that holds text only (a query string, argv), so ``"5"`` is the number it spells."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memvault.core.contract import Flag, Identifier, IdList, JsonObject, Moment, ObjectList, Spec, Text, WholeNumber
from memvault.core.memory.messages import MESSAGE, messages_from
from memvault.core.memory.read.page import MAX_OFFSET, MAX_PAGE
from memvault.core.models import Message

C = TypeVar("C")
MAX_QUERY_CHARS = 20_000
MAX_LIMIT = 500
MAX_BUDGET_TOKENS = 200_000


def _session(description: str) -> Identifier:
    # A session's id names a vault in the shared database: it passes the secret gate like any stored id.
    return Identifier("session_id", description, stored=True)


STORE_REQUEST = Spec("StoreRequest", (
    ObjectList("messages", "The messages, in the order they were said.", required=True, item=MESSAGE),
    JsonObject("metadata", "Kept with every message of the batch, beneath each message's own metadata keys."),
    _session("Store into this session's vault instead of the key's core vault."),
), examples=({
    "messages": [
        {"role": "user", "content": "My cat is called Biscuit.", "timestamp": "2025-03-14T09:30:00Z"},
        {"role": "assistant", "content": "Biscuit is a lovely name for a cat.", "timestamp": "2025-03-14T09:30:04Z"},
    ],
    "metadata": {"channel": "web"},
},))
SEARCH_REQUEST = Spec("SearchRequest", (
    Text("query", "What to look for.", required=True, max_chars=MAX_QUERY_CHARS),
    WholeNumber("limit", "At most this many items (default: as many as the budget holds).", least=1, most=MAX_LIMIT),
    WholeNumber("budget_tokens", "Tokens the items may fill (default: the server's).", least=1,
                most=MAX_BUDGET_TOKENS),
    Moment("now", "The moment recency is measured from: epoch seconds or ISO 8601 (default: now)."),
    _session("Search this session's vault too, beside the key's core vault."),
    Flag("brain", "For a key granted brain scopes: recall its brain facts within the same budget (false: "
         "conversation memory only).", default=True),
    Moment("as_of", "For a key granted brain scopes: the brain's facts as they stood at this moment (default: "
           "the current facts)."),
), examples=({"query": "what is my cat called?", "budget_tokens": 1000},))
READ_REQUEST = Spec("ReadRequest", (
    _session("Read this session's vault instead of the key's core vault."),
    WholeNumber("limit", "At most this many messages (default: the server's page size).", least=1, most=MAX_PAGE),
    WholeNumber("offset", "Pass over this many newer messages first.", least=0, most=MAX_OFFSET, default=0),
))
FORGET_REQUEST = Spec("ForgetRequest", (
    IdList("ids", "Message ids as stored, or as search items list them in source_ids.", required=True),
    _session("Forget only in this session's vault (default: in every vault of the key)."),
), examples=({"ids": ["notes/2024/06?draft#2"], "session_id": "trip planning"},))
CLEAR_REQUEST = Spec("ClearRequest", (
    _session("Clear only this session's vault (default: every vault of the key)."),
    Flag("reset", "Also forget the vaults' embedding dimension (before changing the embedding model).", default=False),
))
PURGE_REQUEST = Spec("PurgeRequest", (
    Moment("older_than", "Delete memory older than this: epoch seconds or ISO 8601.", required=True),
), examples=({"older_than": "2024-01-01T00:00:00Z"},))
STATS_REQUEST = Spec("StatsRequest", ())
EXPORT_REQUEST = Spec("ExportRequest", ())


@dataclass(frozen=True)
class StoreCommand:
    messages: tuple[Message | None, ...]  # None where a message is marked "memory": false
    session_id: str | None = None


@dataclass(frozen=True)
class SearchCommand:
    query: str
    limit: int | None = None
    budget_tokens: int | None = None
    now: float | None = None
    session_id: str | None = None
    brain: bool = True
    as_of: float | None = None


@dataclass(frozen=True)
class ReadCommand:
    session_id: str | None = None
    limit: int | None = None
    offset: int = 0


@dataclass(frozen=True)
class ForgetCommand:
    ids: tuple[str, ...]
    session_id: str | None = None


@dataclass(frozen=True)
class ClearCommand:
    session_id: str | None = None
    reset: bool = False


@dataclass(frozen=True)
class PurgeCommand:
    older_than: float


@dataclass(frozen=True)
class StatsCommand:
    pass


@dataclass(frozen=True)
class ExportCommand:
    pass


Parser = Callable[[object, float, bool], C]


def parse_store(data: object, now: float, text: bool = False) -> StoreCommand:
    """Messages without a timestamp are said ``now``; messages without an id get one here, so
    every surface answers with the ids it stored."""
    values = STORE_REQUEST.values(data, text=text)
    messages = messages_from(values["messages"], now, values["metadata"])
    return StoreCommand(tuple(messages), values["session_id"])


def _fields_of(spec: Spec, kind: Callable[..., C]) -> Parser[C]:
    def parse(data: object, now: float, text: bool = False) -> C:
        return kind(**spec.values(data, text=text))

    return parse


parse_search = _fields_of(SEARCH_REQUEST, SearchCommand)
parse_read = _fields_of(READ_REQUEST, ReadCommand)
parse_forget = _fields_of(FORGET_REQUEST, ForgetCommand)
parse_clear = _fields_of(CLEAR_REQUEST, ClearCommand)
parse_purge = _fields_of(PURGE_REQUEST, PurgeCommand)
parse_stats = _fields_of(STATS_REQUEST, StatsCommand)
parse_export = _fields_of(EXPORT_REQUEST, ExportCommand)

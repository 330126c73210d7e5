"""Plain data shared by every layer. Everything converts to and from JSON-able dicts, because
the Durable Object RPC boundary and the HTTP API both speak plain data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from types import UnionType
from typing import Any, ClassVar, Self, Union, get_args, get_origin, get_type_hints


class Role(StrEnum):
    """Who said a message. The HTTP schemas list these same values."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


ROLES = tuple(role.value for role in Role)


class Plain:
    """Conversion of a dataclass to and from plain data (what crosses the Durable Object
    RPC boundary): each field by its annotation, nested ``Plain`` values and tuples included; a
    field absent from the data takes its default."""

    # Every subclass is a dataclass (frozen, but for a search's many candidates).
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {f.name: to_plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(**{name: convert(data[name]) for name, convert in _converters(cls) if name in data})


def to_plain(value: Any) -> Any:
    """``value`` as plain data: models and dicts as dicts, tuples and lists as lists."""
    if isinstance(value, Plain):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


Converter = Callable[[Any], Any]


def converter(kind: Any) -> Converter:
    """A function that turns plain data into a value of ``kind``, a type annotation (worked out
    once per field or parameter)."""
    args, origin = get_args(kind), get_origin(kind)
    if origin in (Union, UnionType):
        inner = converter(next(a for a in args if a is not type(None)))
        return lambda value: None if value is None else inner(value)
    if origin is tuple:
        item = converter(args[0])
        if item in _SCALARS.values():
            return lambda value: tuple(map(item, value or ()))
        return lambda value: tuple(item(v) for v in value or ())
    if origin in (list, Sequence):
        each = converter(args[0])
        return lambda value: [each(v) for v in value or ()]
    if origin is dict:
        key, entry = converter(args[0]), converter(args[1])
        return lambda value: {key(k): entry(v) for k, v in (value or {}).items()}
    if isinstance(kind, type) and issubclass(kind, Plain):
        return kind.from_dict
    return _SCALARS.get(kind, _same)


def _same(value: Any) -> Any:
    return value


_SCALARS: dict[Any, Converter] = {str: str, int: int, float: float, bool: bool}
_CONVERTERS: dict[type, list[tuple[str, Converter]]] = {}


def _converters(cls: type) -> list[tuple[str, Converter]]:
    if cls not in _CONVERTERS:
        hints = get_type_hints(cls)
        _CONVERTERS[cls] = [(f.name, converter(hints[f.name])) for f in fields(cls)]
    return _CONVERTERS[cls]


@dataclass(frozen=True)
class Message(Plain):
    role: str
    content: str
    timestamp: float
    id: str
    model: str | None = None
    metadata: str | None = None  # canonical JSON text of the caller's object (core.memory.metadata)


@dataclass(frozen=True)
class EmbeddingModel(Plain):
    """The model whose vectors a write will attach: a vault holds one model's vectors only."""

    model_id: str
    dimension: int


@dataclass(frozen=True)
class EmbedJob(Plain):
    """A text that needs the model's vector: a stored row's (by row id) or, with ``pending``, a
    pending message's (by message id)."""

    id: str
    text: str
    pending: bool = False


@dataclass(frozen=True)
class PendingVector(Plain):
    """The vector of one pending message, by its message id."""

    id: str
    embedding: tuple[float, ...]


@dataclass(frozen=True)
class MemoryRow(Plain):
    """One searchable row of a vault: a whole message or a ~300-token chunk of messages."""

    id: str
    kind: str  # "message" | "chunk"
    text: str
    role: str
    model: str | None
    ts_start: float
    ts_end: float
    token_count: int
    source_ids: tuple[str, ...]
    content_hash: str
    parent_id: str | None = None
    embedding: tuple[float, ...] | None = None
    metadata: str | None = None  # a message's metadata; kept in its vault only, never mirrored


@dataclass(frozen=True)
class AppendResult(Plain):
    """What a vault reports after taking messages: the rows created (to mirror), the state of its
    pending buffer, and the texts the change needs the model for (``to_embed``: new messages, and
    chunks none of whose messages it holds; every other vector is carried or derived)."""

    rows: tuple[MemoryRow, ...]
    buffer: tuple[Message, ...]
    buffered_tokens: int
    buffer_version: int
    accepted: int = 0
    to_embed: tuple[EmbedJob, ...] = ()


@dataclass(frozen=True)
class MessagePage(Plain):
    """A vault's messages in the order it took them, for backups and exports: the stored message
    rows after a position (metadata included, vectors left out), the other ids each message was
    said again under, and, on the page that reaches the end, the pending buffer, read in the same
    transaction as that page so no message moving from the buffer into a row is missed."""

    rows: tuple[MemoryRow, ...]
    after: int  # the position to ask for the next page from
    complete: bool  # no stored message follows this page
    pending: tuple[Message, ...] = ()
    said_again: dict[str, list[str]] = field(default_factory=dict)  # message id -> its other ids


@dataclass(frozen=True)
class ForgetResult(Plain):
    """What a vault reports after forgetting messages: the message ids it found, the rows it
    deleted, and (as ``state``) the chunks it cut again and its pending buffer."""

    forgotten: tuple[str, ...]
    removed: tuple[str, ...]
    state: AppendResult


@dataclass(frozen=True)
class BufferState(Plain):
    """A vault's pending buffer as the mirror keeps it (``vectors``: those of its messages that
    have one; filled where the mirror reads the buffer)."""

    messages: tuple[Message, ...]
    tokens: int
    version: int
    vectors: tuple[PendingVector, ...] = ()


@dataclass(frozen=True)
class UsageNote(Plain):
    """Counts a vault write owes its key's usage ledger (``core/usage``), by count name, for the
    UTC day of ``at``: logged in the write's own transaction, added to the ledger by the mirror's
    batch that applies the write."""

    at: float
    counts: dict[str, int]


@dataclass(frozen=True)
class Change(Plain):
    """One entry of a vault's change log, resolved for the mirror: ``rows`` (rows added or
    changed, in their current stored form), ``delete`` (row ids), ``buffer``, ``clear`` or
    ``usage`` (its ``usage``)."""

    seq: int
    kind: str
    rows: tuple[MemoryRow, ...] = ()
    ids: tuple[str, ...] = ()
    usage: UsageNote | None = None


@dataclass(frozen=True)
class ChangeBatch(Plain):
    """Log entries after a sequence number, in order, with the vault's current pending buffer.
    ``floor`` is the newest sequence number trimmed from the log (a mirror that applied less than
    that missed entries and must be rebuilt); ``head`` the newest sequence number written."""

    changes: tuple[Change, ...]
    buffer: BufferState
    head: int
    floor: int


# Not frozen: a search makes hundreds, and a frozen dataclass's fields cost four times as much to set.
@dataclass(slots=True)
class Candidate(Plain):
    """A row found by one channel of a search, before fusion; never changed once made."""

    row: MemoryRow
    channel: str  # "vector" | "keyword" | "context" (a message of a chunk that was hit)
    rank: int
    score: float
    twin_of: str | None = None  # the newest near-duplicate found beside this row, which stands for it

    def to_dict(self) -> dict[str, Any]:
        data = Plain.to_dict(self)  # a slotted dataclass is a new class: ``super()`` without arguments cannot name it
        data["row"]["embedding"] = None  # vectors stay inside the vault; the caller needs text and ranks
        return data


@dataclass(frozen=True)
class SearchQuery(Plain):
    text: str
    vector: tuple[float, ...] | None
    depth: int


@dataclass(frozen=True)
class VaultStats(Plain):
    messages: int
    chunks: int
    unembedded: int
    buffered_messages: int
    buffered_tokens: int
    dimension: int | None
    oldest: float | None
    newest: float | None
    search_memory_bytes: int = 0  # what its searches hold in memory: its rows and vectors, or its vector codes (0: none)


@dataclass
class SearchItem:
    text: str
    score: float
    window: str
    ts_start: float
    ts_end: float
    source_ids: list[str]
    role: str
    tokens: int
    origin: str  # "vault" | "mirror" | "buffer"
    vault: str = "core"


@dataclass
class SearchResult:
    items: list[SearchItem]
    tokens: int
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreResult:
    rows_stored: int
    chunks_stored: int
    tokens_buffered: int
    messages_accepted: int
    updated_at: float  # when the vault took the write (epoch seconds)
    redactions: tuple[str, ...] = ()
    mirrored: bool = True

"""Plain data shared by every layer. Everything converts to and from JSON-able dicts, because
the Durable Object RPC boundary and the HTTP API both speak plain data."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    """Who said a message. The HTTP schemas list these same values."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


ROLES = tuple(role.value for role in Role)


@dataclass(frozen=True)
class Message:
    role: str
    content: str
    timestamp: float
    id: str
    model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=str(data["role"]),
            content=str(data["content"]),
            timestamp=float(data["timestamp"]),
            id=str(data["id"]),
            model=data.get("model"),
        )


@dataclass(frozen=True)
class EmbedJob:
    """A stored row whose text still needs an embedding."""

    id: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmbedJob:
        return cls(id=str(data["id"]), text=str(data["text"]))


@dataclass(frozen=True)
class MemoryRow:
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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["source_ids"] = list(self.source_ids)
        data["embedding"] = None if self.embedding is None else list(self.embedding)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryRow:
        embedding = data.get("embedding")
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            text=str(data["text"]),
            role=str(data["role"]),
            model=data.get("model"),
            ts_start=float(data["ts_start"]),
            ts_end=float(data["ts_end"]),
            token_count=int(data["token_count"]),
            source_ids=tuple(str(s) for s in data.get("source_ids") or ()),
            content_hash=str(data["content_hash"]),
            parent_id=data.get("parent_id"),
            embedding=None if embedding is None else tuple(float(x) for x in embedding),
        )


@dataclass(frozen=True)
class AppendResult:
    """What a vault reports after taking messages: the rows created (to embed and mirror),
    and the state of its pending buffer."""

    rows: tuple[MemoryRow, ...]
    buffer: tuple[Message, ...]
    buffered_tokens: int
    buffer_version: int
    accepted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [row.to_dict() for row in self.rows],
            "buffer": [m.to_dict() for m in self.buffer],
            "buffered_tokens": self.buffered_tokens,
            "buffer_version": self.buffer_version,
            "accepted": self.accepted,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppendResult:
        return cls(
            rows=tuple(MemoryRow.from_dict(r) for r in data["rows"]),
            buffer=tuple(Message.from_dict(m) for m in data["buffer"]),
            buffered_tokens=int(data["buffered_tokens"]),
            buffer_version=int(data["buffer_version"]),
            accepted=int(data.get("accepted", 0)),
        )


@dataclass(frozen=True)
class ForgetResult:
    """What a vault reports after forgetting messages: the message ids it found, the rows it
    deleted, and (as ``state``) the chunks it cut again and its pending buffer."""

    forgotten: tuple[str, ...]
    removed: tuple[str, ...]
    state: AppendResult

    def to_dict(self) -> dict[str, Any]:
        return {"forgotten": list(self.forgotten), "removed": list(self.removed), "state": self.state.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ForgetResult:
        return cls(
            forgotten=tuple(str(i) for i in data["forgotten"]),
            removed=tuple(str(i) for i in data["removed"]),
            state=AppendResult.from_dict(data["state"]),
        )


@dataclass(frozen=True)
class Candidate:
    """A row found by one channel of a search, before fusion."""

    row: MemoryRow
    channel: str  # "vector" | "keyword" | "context" (a message of a chunk that was hit)
    rank: int
    score: float

    def to_dict(self) -> dict[str, Any]:
        row = self.row.to_dict()
        row["embedding"] = None  # vectors stay inside the vault; the caller only needs text and ranks
        return {"row": row, "channel": self.channel, "rank": self.rank, "score": self.score}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        return cls(
            row=MemoryRow.from_dict(data["row"]),
            channel=str(data["channel"]),
            rank=int(data["rank"]),
            score=float(data["score"]),
        )


@dataclass(frozen=True)
class SearchQuery:
    text: str
    vector: tuple[float, ...] | None
    depth: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "vector": None if self.vector is None else list(self.vector),
            "depth": self.depth,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchQuery:
        vector = data.get("vector")
        return cls(
            text=str(data["text"]),
            vector=None if vector is None else tuple(float(x) for x in vector),
            depth=int(data["depth"]),
        )


@dataclass(frozen=True)
class VaultStats:
    messages: int
    chunks: int
    unembedded: int
    buffered_messages: int
    buffered_tokens: int
    dimension: int | None
    oldest: float | None
    newest: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VaultStats:
        values: dict[str, Any] = {k: data.get(k) for k in cls.__dataclass_fields__}
        return cls(**values)


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
    redactions: tuple[str, ...] = ()
    mirrored: bool = True

"""The ports core needs from a platform. Each has a local and a Cloudflare adapter, and a
contract test suite both pass. A method marked ``@repeatable`` is safe to call again after a
passing failure (a read, or a write idempotent by its keys): the retrying wrappers
(``core/retry.py``) repeat exactly those, and make every other call once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from memvault.core import models
from memvault.core.sql import Row

T = TypeVar("T")
Method = TypeVar("Method", bound=Callable[..., Any])
_REPEATABLE: set[Callable[..., Any]] = set()


def repeatable(method: Method) -> Method:
    _REPEATABLE.add(method)
    return method


def is_repeatable(method: Callable[..., Any]) -> bool:
    return method in _REPEATABLE


class SyncSql(Protocol):
    """Synchronous SQLite: local sqlite3, or a Durable Object's ``ctx.storage.sql``."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def transaction(self, work: Callable[[], T]) -> T:
        """Run ``work`` atomically: every statement lands, or none does."""
        ...


class Database(Protocol):
    """Asynchronous SQLite with D1's shape: the mirror, keys and the brain live here."""

    @repeatable
    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; return the number of rows it changed."""
        ...

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Run statements atomically, in order."""
        ...


class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @repeatable
    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class VaultClient(Protocol):
    """One conversation vault (a Durable Object in production, a SQLite file locally). Its methods
    are the vault's operations: ``VaultStore`` carries out each, and the adapters and the Durable
    Object derive theirs from this list (``core/memory/vault_table.py``)."""

    async def append(
        self, messages: Sequence[models.Message], model: models.EmbeddingModel | None = None,
        usage: models.UsageNote | None = None,
    ) -> models.AppendResult:
        """Take messages in; ``usage`` is logged for the key's usage ledger in the same transaction."""
        ...

    async def attach_embeddings(
        self, model_id: str, embeddings: dict[str, list[float]], pending: dict[str, list[float]] | None = None,
        usage: models.UsageNote | None = None,
    ) -> int:
        """Attach vectors to stored rows (by row id) and to pending messages (``pending``, by message
        id); chunks whose messages all have a vector then get their mean. ``usage`` is logged as
        ``append``'s. Returns how many were attached."""
        ...

    async def flush(self) -> models.AppendResult: ...

    async def prepare_search(self, text: str, depth: int) -> None:
        """Start a coming search of ``text`` on the work that needs no query vector (its keyword
        channel), to be asked while the query is embedded; that search then goes on from it."""

    async def search(self, query: models.SearchQuery) -> list[models.Candidate]: ...

    async def pending(self) -> list[models.Message]: ...

    async def unembedded(self, limit: int) -> list[models.EmbedJob]: ...

    async def rows(self, after: str | None, limit: int) -> list[models.MemoryRow]: ...

    async def clear(self, reset: bool) -> None: ...

    async def forget(self, ids: Sequence[str]) -> models.ForgetResult:
        """Forget messages by id: their rows, buffer entries, and every chunk or overlap holding them."""
        ...

    async def changes(self, after: int, max_entries: int, max_rows: int) -> models.ChangeBatch:
        """Change-log entries after ``after``, resolved to the rows' current stored form."""
        ...

    async def trim(self, upto: int) -> None:
        """Drop change-log entries the mirror has applied."""
        ...

    async def messages(self, after: int, limit: int) -> models.MessagePage:
        """Stored messages after position ``after`` in the order the vault took them (the pending
        buffer on the page that reaches the end): what backups and exports read."""
        ...

    async def recent_messages(self, limit: int, offset: int) -> list[models.MemoryRow]: ...

    async def generation(self) -> int:
        """A number every mutation of the vault moves on (its change-log head): what a cached
        read of the vault is valid for."""
        ...

    async def delete_older_than(self, cutoff: float) -> list[str]:
        """Delete what was said before ``cutoff``; the ids of the rows, then of the pending
        messages, deleted."""
        ...

    async def stats(self) -> models.VaultStats: ...


class VaultDirectory(Protocol):
    def vault(self, name: str) -> VaultClient: ...


class BlobStore(Protocol):
    @repeatable
    async def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None: ...

    @repeatable
    async def get(self, key: str) -> bytes | None: ...

    @repeatable
    async def delete(self, key: str) -> None: ...


class Cache(Protocol):
    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str, ttl_seconds: int | None = None) -> None: ...

    async def delete(self, key: str) -> None: ...


@dataclass(frozen=True)
class VectorMatch:
    id: str
    score: float
    metadata: dict[str, Any]


class VectorIndex(Protocol):
    @repeatable
    async def upsert(self, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]) -> None: ...

    @repeatable
    async def query(
        self,
        vector: Sequence[float],
        top_k: int,
        metadata_filter: dict[str, Any] | None = None,
        *,
        with_metadata: bool = False,
    ) -> list[VectorMatch]:
        """The nearest ``top_k`` (at most 100) vectors passing the filter, best first; their
        metadata only ``with_metadata`` (otherwise empty), since fetching it is not free."""
        ...

    @repeatable
    async def delete(self, ids: Sequence[str]) -> None: ...


class ChatModel(Protocol):
    """A chat LLM answering one prompt with text: the brain's write-time judge."""

    @property
    def model_id(self) -> str: ...

    async def complete(self, system: str, user: str) -> str: ...


class CpuWork(Protocol):
    """Runs CPU-heavy work where it holds up no other caller (``core/cpu.py``)."""

    async def run(self, work: Callable[[], T]) -> T: ...


class BackgroundTasks(Protocol):
    """Work that must finish after the response is sent (``waitUntil`` / asyncio tasks)."""

    def run(self, work: Callable[[], Awaitable[None]]) -> None: ...


class UpstreamResponse(Protocol):
    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> list[tuple[str, str]]: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class HttpClient(Protocol):
    async def send(
        self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> UpstreamResponse:
        """Send a request; the response body is streamed, not read ahead."""
        ...


class Cipher(Protocol):
    """AES-256-GCM, the one authenticated cipher memvault seals secrets with (WebCrypto on Workers,
    the ``cryptography`` library locally): both produce the same bytes, so what one runtime
    sealed the other opens. The caller picks the nonce (12 bytes, never reused under a key)."""

    async def encrypt(self, key: bytes, nonce: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
        """The ciphertext with its 16-byte tag appended."""
        ...

    async def decrypt(self, key: bytes, nonce: bytes, ciphertext: bytes, associated_data: bytes) -> bytes:
        """The plaintext; ``Undecryptable`` when the ciphertext, its tag, the nonce, the key or the
        associated data is not what sealed it."""
        ...

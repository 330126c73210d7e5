"""What each operation of conversation memory answers: the public shape on every surface (HTTP,
RPC, MCP, CLI, the client), serialised once by ``core.shapes.plain``. A search answers with
``models.SearchResult``; an export with its records (``transfer.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memvault.core.models import VaultStats
from memvault.core.shapes import doc


@dataclass(frozen=True)
class StoreReceipt:
    """What a store did: the messages are findable at once, pending or stored."""

    message_ids: tuple[str | None, ...] = field(metadata=doc(
        "Per message sent, in order: the id it is stored under (null if marked memory: false)."
    ))
    messages_accepted: int = field(metadata=doc("Messages the vault took anew (a message it holds already is not taken twice)."))
    messages_stored: int = field(metadata=doc("Messages stored as rows of their own by this call."))
    chunks_stored: int = field(metadata=doc("Chunks cut from the pending buffer by this call."))
    tokens_buffered: int = field(metadata=doc("Tokens in the pending buffer after the call."))
    updated_at: float = field(metadata=doc("When the vault took the write, in epoch seconds."))
    redactions: tuple[str, ...] = field(metadata=doc("Kinds of secret replaced before anything was stored."))
    mirrored: bool = field(metadata=doc("Whether the mirror holds the write already (else it catches up in the background)."))


@dataclass(frozen=True)
class PageMessage:
    """One message of a vault as it holds it: pending (not yet cut into a chunk) or stored."""

    state: str = field(metadata=doc("pending or stored."))
    id: str = field(metadata=doc("The message's id."))
    role: str = field(metadata=doc("user, assistant, system or tool."))
    content: str = field(metadata=doc("The text, as stored (secrets redacted)."))
    timestamp: float = field(metadata=doc("When it was said, in epoch seconds."))
    model: str | None = field(metadata=doc("The model that answered, where one was given."))
    metadata: dict[str, Any] | None = field(metadata=doc("The object kept with the message."))


@dataclass(frozen=True)
class MemoryPage:
    """One page of a vault's messages, newest first, read from the vault itself (never behind)."""

    session_id: str | None = field(metadata=doc("The session vault read, or null for the core vault."))
    offset: int = field(metadata=doc("How many newer messages were passed over."))
    limit: int = field(metadata=doc("The most messages the page holds."))
    items: tuple[PageMessage, ...] = field(metadata=doc("Newest first: pending messages, then stored ones."))


@dataclass(frozen=True)
class ForgetReceipt:
    forgotten: tuple[str, ...] = field(metadata=doc("The ids found and forgotten, in the order asked."))
    not_found: tuple[str, ...] = field(metadata=doc("The ids no vault held."))


@dataclass(frozen=True)
class ClearReceipt:
    cleared_vaults: int = field(metadata=doc("How many vaults were cleared."))
    reset: bool = field(metadata=doc("Whether the vaults forgot their embedding dimension too."))


@dataclass(frozen=True)
class PurgeReceipt:
    rows_deleted: int = field(metadata=doc("Rows deleted from the vaults (the mirror follows)."))


@dataclass(frozen=True)
class MirrorCounts:
    rows: int = field(metadata=doc("Rows the mirror holds for the vault."))
    buffered_tokens: int = field(metadata=doc("Tokens of the vault's pending buffer the mirror holds."))


@dataclass(frozen=True)
class VaultCounts:
    vault: VaultStats = field(metadata=doc("As the vault counts itself."))
    mirror: MirrorCounts = field(metadata=doc("As the mirror counts the vault."))


@dataclass(frozen=True)
class MemoryStats:
    """Counts per vault of the key, vault and mirror side by side, and the read cache's hits and
    misses of the key's own memory searches (this process's, or this isolate's on Workers)."""

    key_id: str = field(metadata=doc("The memory key's id."))
    vaults: dict[str, VaultCounts] = field(metadata=doc("By vault: core, or session:<id>."))
    cache: dict[str, Any] = field(metadata=doc("Hits, misses and hit rate of the key's own reads through the read cache, in all and by kind of read."))

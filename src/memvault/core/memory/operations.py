"""The operations of conversation memory as every surface calls them: ``perform(deps, caller,
OPERATION, data)`` parses the data with the operation's one parser and runs it for the caller's
memory key, answering with the operation's result (``results.py``). HTTP, RPC, MCP, the CLI and
the client translate their transport into ``data`` and the result into their answer; nothing
else. The caller is the memory key ``core.credentials.callers`` resolved from the request's credentials."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memvault.core.contract import Spec
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.memory import commands as c
from memvault.core.memory.accounting import account_later
from memvault.core.memory.read.export import export_memory
from memvault.core.memory.read.page import read_memory
from memvault.core.memory.read.receipts import list_receipts, read_receipt
from memvault.core.memory.read.search import search_memory
from memvault.core.memory.read.stats import memory_stats
from memvault.core.memory.results import (
    ClearReceipt,
    ForgetReceipt,
    MemoryPage,
    MemoryStats,
    PageMessage,
    PurgeReceipt,
    StoreReceipt,
)
from memvault.core.memory.write import clear_memory, forget, purge_old_memory, store_conversation
from memvault.core.models import SearchResult
from memvault.core.receipts.commands import (
    RECEIPT_REQUEST,
    RECEIPTS_REQUEST,
    ReceiptCommand,
    ReceiptsCommand,
    parse_receipt,
    parse_receipts,
)
from memvault.core.receipts.model import ReceiptDay, ReceiptView
from memvault.core.usage.limits import admit
from memvault.core.usage.meter import CallUsage, metering

C = TypeVar("C")
R = TypeVar("R")


@dataclass(frozen=True)
class Operation(Generic[C, R]):
    """One operation: its name, what it takes (``request``, for documents), its one parser, what
    it does, and what it answers (``result``, for documents)."""

    name: str
    request: Spec
    parse: c.Parser[C]
    run: Callable[[Deps, MemoryKey, C], Awaitable[R]]
    result: type


async def perform(deps: Deps, caller: MemoryKey, operation: Operation[C, R], data: object, text: bool = False) -> R:
    """Parse ``data`` as ``operation`` takes it (nothing runs if it is refused), then run it if
    the key's limits admit it."""
    command = operation.parse(data, deps.clock(), text)
    await admit(deps.db, caller, deps.clock())
    return await operation.run(deps, caller, command)


async def _store(deps: Deps, caller: MemoryKey, command: c.StoreCommand) -> StoreReceipt:
    kept = [message for message in command.messages if message is not None]
    # Its usage rides the vault writes that take the messages and their vectors (``counted``).
    result = await store_conversation(deps, caller.id, kept, command.session_id, counted=True)
    return StoreReceipt(
        message_ids=tuple(None if message is None else message.id for message in command.messages),
        messages_accepted=result.messages_accepted,
        messages_stored=result.rows_stored,
        chunks_stored=result.chunks_stored,
        tokens_buffered=result.tokens_buffered,
        updated_at=result.updated_at,
        redactions=result.redactions,
        mirrored=result.mirrored,
    )


async def _search(deps: Deps, caller: MemoryKey, command: c.SearchCommand) -> SearchResult:
    with metering() as meter:
        found = await search_memory(deps, caller.id, command.query, limit=command.limit,
                                    budget_tokens=command.budget_tokens, now=command.now, session_id=command.session_id)
    account_later(deps, caller.id, None, CallUsage(searches=1) + meter.usage)
    return found


async def _read(deps: Deps, caller: MemoryKey, command: c.ReadCommand) -> MemoryPage:
    limit = deps.settings.read_page_size if command.limit is None else command.limit
    items = await read_memory(deps, caller.id, command.session_id, limit, command.offset)
    return MemoryPage(command.session_id, command.offset, limit, tuple(PageMessage(**item) for item in items))


async def _forget(deps: Deps, caller: MemoryKey, command: c.ForgetCommand) -> ForgetReceipt:
    found = await forget(deps, caller.id, command.ids, command.session_id)
    return ForgetReceipt(tuple(found["forgotten"]), tuple(found["not_found"]))


async def _clear(deps: Deps, caller: MemoryKey, command: c.ClearCommand) -> ClearReceipt:
    return ClearReceipt(len(await clear_memory(deps, caller.id, command.session_id, command.reset)), command.reset)


async def _purge(deps: Deps, caller: MemoryKey, command: c.PurgeCommand) -> PurgeReceipt:
    return PurgeReceipt(await purge_old_memory(deps, caller.id, command.older_than))


async def _stats(deps: Deps, caller: MemoryKey, command: c.StatsCommand) -> MemoryStats:
    return await memory_stats(deps, caller.id)


async def _receipt(deps: Deps, caller: MemoryKey, command: ReceiptCommand) -> ReceiptView:
    return await read_receipt(deps, caller.id, command)


async def _receipts(deps: Deps, caller: MemoryKey, command: ReceiptsCommand) -> ReceiptDay:
    return await list_receipts(deps, caller.id, command)


async def _export(deps: Deps, caller: MemoryKey, command: c.ExportCommand) -> AsyncIterator[dict[str, Any]]:
    return export_memory(deps, caller.id)


STORE = Operation("store", c.STORE_REQUEST, c.parse_store, _store, StoreReceipt)
SEARCH = Operation("search", c.SEARCH_REQUEST, c.parse_search, _search, SearchResult)
READ = Operation("read", c.READ_REQUEST, c.parse_read, _read, MemoryPage)
FORGET = Operation("forget", c.FORGET_REQUEST, c.parse_forget, _forget, ForgetReceipt)
CLEAR = Operation("clear", c.CLEAR_REQUEST, c.parse_clear, _clear, ClearReceipt)
PURGE = Operation("purge", c.PURGE_REQUEST, c.parse_purge, _purge, PurgeReceipt)
STATS = Operation("stats", c.STATS_REQUEST, c.parse_stats, _stats, MemoryStats)
# Records one at a time, vault by vault, as `memvault import` reads them back (``transfer.py``).
EXPORT = Operation("export", c.EXPORT_REQUEST, c.parse_export, _export, dict)
RECEIPT = Operation("receipt", RECEIPT_REQUEST, parse_receipt, _receipt, ReceiptView)
RECEIPTS = Operation("receipts", RECEIPTS_REQUEST, parse_receipts, _receipts, ReceiptDay)
OPERATIONS: tuple[Operation[Any, Any], ...] = (
    STORE, SEARCH, READ, FORGET, CLEAR, PURGE, STATS, EXPORT, RECEIPT, RECEIPTS,
)

"""The memory search every surface runs (HTTP, RPC, MCP, the CLI, the client): memory's own
parser and result for a key without a brain grant (or a call that says ``brain: false``), the joint
recall (``joint.py``) for a key granted brain scopes. Either way the answer has the same fields.
Reading a receipt likewise: memory's parser, its messages resolved by memory, its facts here
(``receipts.py``)."""

from __future__ import annotations

import time
from dataclasses import replace

from memvault.core.answers.grants import credential_of
from memvault.core.answers.joint import Query, search_answers
from memvault.core.answers.receipts import with_facts
from memvault.core.answers.results import SearchResult
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.memory import commands as c
from memvault.core.memory.accounting import account_later
from memvault.core.memory.operations import RECEIPT as MEMORY_RECEIPT
from memvault.core.memory.operations import SEARCH as MEMORY_SEARCH
from memvault.core.memory.operations import Operation
from memvault.core.memory.read.search import search_memory
from memvault.core.models import SearchResult as MemoryResult
from memvault.core.receipts.commands import ReceiptCommand
from memvault.core.receipts.model import ReceiptView
from memvault.core.receipts.record import keep_search, without_cut
from memvault.core.usage.ledger import usage_statement
from memvault.core.usage.meter import CallUsage, metering


async def _search(deps: Deps, caller: MemoryKey, command: c.SearchCommand) -> SearchResult:
    """The search, with its receipt kept and its usage accounted."""
    started = time.perf_counter()
    with metering() as meter:
        found = await _find(deps, caller, command)
    usage = CallUsage(searches=1) + meter.usage
    total_ms = (time.perf_counter() - started) * 1000.0
    # The usage is written with the receipt, which the answer waits for anyway: no crash loses it.
    receipt = await keep_search(deps, caller.id, command.query, command.session_id, command.budget_tokens,
                                MemoryResult(found.items, found.tokens, found.metrics), found.facts, total_ms,
                                also=[usage_statement(caller.id, deps.clock(), None, usage)])
    if receipt is None:
        account_later(deps, caller.id, None, usage)
    return replace(found, metrics=without_cut(found.metrics), receipt=receipt)


async def _find(deps: Deps, caller: MemoryKey, command: c.SearchCommand) -> SearchResult:
    credential = credential_of(caller, deps.settings) if command.brain else None
    if credential is None:
        found = await search_memory(deps, caller.id, command.query, limit=command.limit,
                                    budget_tokens=command.budget_tokens, now=command.now, session_id=command.session_id)
        return SearchResult(items=found.items, tokens=found.tokens, metrics=found.metrics)
    query = Query(command.query, command.budget_tokens, command.limit, command.now, command.session_id, command.as_of)
    return await search_answers(deps, caller.id, credential, query)


# Memory's search with its one parser, run jointly.
SEARCH = Operation(MEMORY_SEARCH.name, MEMORY_SEARCH.request, MEMORY_SEARCH.parse, _search, SearchResult)


async def _receipt(deps: Deps, caller: MemoryKey, command: ReceiptCommand) -> ReceiptView:
    return await with_facts(deps, caller, await MEMORY_RECEIPT.run(deps, caller, command))


# Memory's receipt with its one parser, its facts resolved too.
RECEIPT = Operation(MEMORY_RECEIPT.name, MEMORY_RECEIPT.request, MEMORY_RECEIPT.parse, _receipt, ReceiptView)

"""The nightly maintenance pass: bounded work per cron invocation, resumed where it stopped, and a
report of what each invocation did.

Every invocation first settles routed calls a crash left in the journal, oldest first (their
turns stored, their usage and receipts paid; ``core/memory/routed_calls.py``). A pass belongs to
the UTC day it started on and runs its stages in order:
1. ``memory``, vault by vault in (key id, vault name) order:
   archival purge (rows older than the long-term window leave the vault and the mirror together,
   unless the key keeps its archive; a revoked key's memory still ages out), then, for active keys,
   a flush of a pending buffer idle for longer than ``buffer_idle_hours`` and the reconcile (rows
   stored without a vector are embedded, the mirror applies what its vault logged, a mirror whose
   counts still differ is rebuilt);
2. ``brain``: facts written while the embedder was down, or changed since, are embedded;
3. ``consolidate``: the brain is consolidated over every scope (``brain.consolidate``); its
   proposals are stored for a writer to accept or reject, and nothing else about a fact changes;
   then ``receipts``: receipts older than ``receipt_days`` are deleted;
4. ``backup``: a JSONL export of the shared database to the blob store (``core/operations/backup.py``).

Each invocation spends at most ``cron_query_budget`` database statements and tends at most
``cron_vault_budget`` vaults; before each vault (or backup page) it checks the budget, and once it
is spent it records its place in the cursor (``core/operations/maintenance_cursor.py``) and returns. The next
invocation carries on from there; a pass that is done waits for the next UTC day. A new stage is a
function ``(run, state) -> done`` added to ``STAGES``; ``state`` is its own resume point.

This module only orchestrates: every read and write of a vault or the mirror goes through the
memory wing's write and read paths. One failing key or vault is recorded and skipped, never
allowed to stop the others.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, TypeVar

from memvault.core import brain, memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.memory import routed_calls
from memvault.core.memory.names import session_of
from memvault.core.operations import backup
from memvault.core.operations.maintenance_cursor import (
    Budget,
    CountingDatabase,
    PassCursor,
    load_cursor,
    pass_day,
    save_cursor,
)
from memvault.core.receipts.store import ReceiptStore

log = logging.getLogger(__name__)
T = TypeVar("T")
# Journaled calls settled between two checks of the budget (each costs a few statements), and the
# most pages one invocation settles.
JOURNAL_PAGE = 20
JOURNAL_PAGES = 5


@dataclass
class MaintenanceReport:
    started_at: float
    pass_day: str = ""
    resumed: bool = False  # this invocation carried on a pass an earlier one started
    finished: bool = False  # the pass is complete (now, or already before this invocation)
    stopped_at: str | None = None  # where the budget ran out: the next invocation starts there
    statements: int = 0  # database statements this invocation sent
    keys: int = 0
    purged_keys: int = 0
    kept_archive_keys: int = 0
    rows_purged: int = 0
    vaults_seen: int = 0
    buffers_flushed: int = 0
    chunks_flushed: int = 0
    rows_embedded: int = 0
    changes_applied: int = 0
    mirrors_rebuilt: int = 0
    facts_embedded: int = 0
    proposals_stored: int = 0
    proposals_stale: int = 0
    broken_chains: int = 0
    cyclic_chains: int = 0
    receipts_trimmed: int = 0
    calls_settled: int = 0
    backup: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


@dataclass
class Run:
    """One invocation's share of a pass."""

    deps: Deps  # its database counts statements against the budget
    budget: Budget
    cursor: PassCursor
    report: MaintenanceReport
    now: float


Stage = Callable[[Run, dict[str, Any]], Awaitable[bool]]


async def run_maintenance(deps: Deps, now: float | None = None, new_pass: bool = False) -> MaintenanceReport:
    """One invocation: resume the pass in progress, or start today's if the last one is done
    (``new_pass`` starts one even if today's is done: the CLI's run on demand)."""
    now = deps.clock() if now is None else now
    started = time.perf_counter()
    counted = CountingDatabase(deps.db)
    budget = Budget(counted, deps.settings.cron_query_budget, deps.settings.cron_vault_budget)
    report = MaintenanceReport(started_at=now)
    cursor = await load_cursor(counted)
    if cursor is None or (cursor.finished and (new_pass or cursor.day != pass_day(now))):
        cursor = PassCursor(day=pass_day(now), started_at=now)
    else:
        report.resumed = not cursor.finished
    report.pass_day = cursor.day
    run = Run(dataclasses.replace(deps, db=counted), budget, cursor, report, now)
    await settle_journal(run)
    if not cursor.finished:
        await _advance(run)
        await save_cursor(counted, cursor, now)
    report.finished = cursor.finished
    report.statements = counted.statements
    report.duration_ms = round((time.perf_counter() - started) * 1000, 2)
    log.info("maintenance invocation finished: %s", {k: v for k, v in report.to_dict().items() if k != "errors"})
    return report


async def _advance(run: Run) -> None:
    for name, stage in STAGES:
        if name in run.cursor.stages_done:
            continue
        if not await stage(run, run.cursor.state(name)):
            run.report.stopped_at = _where(name, run.cursor.state(name))
            return
        run.cursor.stages_done.append(name)
    run.cursor.finished = True


def _where(stage: str, state: dict[str, Any]) -> str:
    label = state.get("after_label") or state.get("after")
    return f"{stage} after {label}" if label else f"{stage} (not started)"


async def settle_journal(run: Run) -> None:
    """Journaled calls nobody settled, oldest first, a page at a time within the budget. Rows that
    keep failing (their vault unreachable) are tried again next time, so each invocation takes at
    most ``JOURNAL_PAGES`` pages and leaves the rest of its budget to the pass. Its statements
    count against the budget; it takes no unit, so the pass still moves on however small that is."""
    answered_before = run.now - routed_calls.ANSWERED_CALL_SECONDS
    opened_before = run.now - routed_calls.OPEN_CALL_SECONDS
    after = (0.0, "")
    for _ in range(JOURNAL_PAGES):
        tried = await _guarded(run.report, "settle journaled calls", partial(
            routed_calls.settle_leftovers, run.deps, answered_before, opened_before, JOURNAL_PAGE, after))
        run.report.calls_settled += len(tried or [])
        if not tried or len(tried) < JOURNAL_PAGE or run.budget.spent:
            return
        after = (tried[-1].created_at, tried[-1].id)


async def tend_memory(run: Run, state: dict[str, Any]) -> bool:
    """Every vault of every key, in (key id, vault name) order, after the last one done."""
    after = tuple(state.get("position") or ("", ""))
    for key in sorted(await keys.list_keys(run.deps.db), key=lambda k: k.id):
        if (key.id, "\uffff") <= after:
            continue  # every vault of this key was tended earlier in the pass
        names = await _guarded(run.report, f"list vaults {key.id}", partial(memory.vaults_of, run.deps, key.id))
        pending = [name for name in names or [] if (key.id, name) > after]
        if not pending:
            continue
        if run.budget.spent:
            return False
        run.report.keys += 1
        idle: set[str] | None = None
        purges_failed = False
        for name in pending:
            if run.budget.spent:
                return False
            if idle is None and key.revoked_at is None:
                idle = set(await _guarded(run.report, f"idle buffers {key.id}", partial(_idle, run, key.id)) or [])
            purged = await _tend_vault(run, key, name, idle or set())
            purges_failed = purges_failed or not purged
            run.budget.vaults_tended += 1
            run.budget.units += 1
            state["position"], state["after"] = [key.id, name], name
        if key.keep_archive:
            run.report.kept_archive_keys += 1
        elif not purges_failed:
            run.report.purged_keys += 1
    return True


async def _idle(run: Run, key_id: str) -> list[str]:
    idle_before = run.now - run.deps.settings.buffer_idle_hours
    return await memory.idle_vaults(run.deps, key_id, idle_before)


async def _tend_vault(run: Run, key: keys.MemoryKey, name: str, idle: set[str]) -> bool:
    """Purge, flush and reconcile one vault; whether its purge (if it has one) succeeded."""
    deps, report = run.deps, run.report
    report.vaults_seen += 1
    purged = True
    if not key.keep_archive:
        cutoff = run.now - deps.settings.long_term_window_days
        removed = await _guarded(report, f"purge {name}", partial(memory.purge_vault, deps, key.id, name, cutoff))
        report.rows_purged += removed or 0
        purged = removed is not None
    if key.revoked_at is not None:
        return purged  # a revoked key's memory still ages out, but is no longer flushed or re-embedded
    if name in idle:
        flushed = await _guarded(report, f"flush {name}", partial(memory.flush_pending, deps, key.id, session_of(name)))
        if flushed is not None:
            report.buffers_flushed += 1
            report.chunks_flushed += flushed.chunks_stored
    done = await _guarded(
        report, f"reconcile {name}",
        partial(memory.reconcile_vault, deps, key.id, session_of(name), embed_limit=deps.tuning.reembed_batch),
    )
    if done is not None:
        report.rows_embedded += int(done.get("embedded", 0))
        report.changes_applied += done["applied"]
        report.mirrors_rebuilt += done["rebuilt"]
    return purged


async def embed_brain(run: Run, state: dict[str, Any]) -> bool:
    if run.budget.spent:
        return False
    credential = brain.maintenance_credential(run.deps.settings)
    facts = await _guarded(
        run.report, "embed brain facts",
        partial(brain.embed_pending, run.deps, credential, run.deps.tuning.reembed_batch),
    )
    run.report.facts_embedded = facts or 0
    run.budget.units += 1
    return True


async def consolidate_brain(run: Run, state: dict[str, Any]) -> bool:
    if run.budget.spent:
        return False
    credential = brain.maintenance_credential(run.deps.settings)
    found = await _guarded(run.report, "consolidate the brain",
                           partial(brain.CONSOLIDATE.perform, run.deps, credential, {"dry_run": False}))
    if found:
        run.report.proposals_stored, run.report.proposals_stale = found.stored or 0, found.stale or 0
        run.report.broken_chains = len(found.chains.broken)
        run.report.cyclic_chains = len(found.chains.cyclic)
    run.budget.units += 1
    return True


async def trim_receipts(run: Run, state: dict[str, Any]) -> bool:
    if run.budget.spent:
        return False
    before = run.now - run.deps.settings.receipt_days
    gone = await _guarded(run.report, "trim receipts", partial(ReceiptStore(run.deps.db).delete_before, before))
    run.report.receipts_trimmed = gone or 0
    return True


async def write_backup(run: Run, state: dict[str, Any]) -> bool:
    progress = await _guarded(run.report, "backup", partial(backup.backup_step, run.deps, run.budget, state, run.now))
    if progress is None:
        return True  # a failed backup is reported; the next pass writes a new one
    run.report.backup = progress.to_dict()
    return progress.complete


STAGES: tuple[tuple[str, Stage], ...] = (
    ("memory", tend_memory),
    ("brain", embed_brain),
    ("consolidate", consolidate_brain),
    ("receipts", trim_receipts),
    ("backup", write_backup),
)


async def _guarded(report: MaintenanceReport, step: str, work: Callable[[], Awaitable[T]]) -> T | None:
    try:
        return await work()
    except Exception as exc:  # one key or vault must not stop the nightly run for the others
        report.errors.append(f"{step}: {type(exc).__name__}")
        log.warning("maintenance step failed: %s (%s)", step, type(exc).__name__)
        return None

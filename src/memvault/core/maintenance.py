"""The nightly maintenance run: one cron does all of it, and reports what it did.

For every memory key:
1. archival purge: rows older than the long-term window leave the vaults and the mirror together
   (``memory.purge_old_memory``), unless the key opted into keeping its archive;
2. stale buffer flush: a pending buffer left idle for longer than ``buffer_idle_hours`` becomes a
   chunk now (``memory.flush_idle_buffers``), so it is embedded and searchable;
3. reconcile: rows stored without a vector are embedded, the mirror applies whatever its vault
   logged and it could not apply before, and a mirror whose counts still differ from its vault's
   is rebuilt from the vault (``memory.reconcile_vault``);
4. brain facts written while the embedder was down, or changed since, are embedded
   (``brain.embed_pending``).

This module only orchestrates: every read and write of a vault or the mirror goes through
the memory wing's write and read paths. One failing key or vault is recorded and skipped, never
allowed to stop the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, TypeVar

from memvault.core import brain, keys, memory
from memvault.core.deps import Deps
from memvault.core.memory.names import session_of

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class MaintenanceReport:
    started_at: float
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
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


async def run_maintenance(deps: Deps, now: float | None = None) -> MaintenanceReport:
    now = deps.clock() if now is None else now
    started = time.perf_counter()
    report = MaintenanceReport(started_at=now)
    for key in await keys.list_keys(deps.db):
        report.keys += 1
        await _purge(deps, key, now, report)
        # A revoked key's memory still ages out, but is no longer flushed or re-embedded.
        if key.revoked_at is None:
            await _tend_vaults(deps, key.id, now, report)
    facts = await _guarded(
        report, "embed brain facts", partial(brain.embed_pending, deps, brain.maintenance_credential(deps.settings), deps.settings.reembed_batch)
    )
    report.facts_embedded = facts or 0
    report.duration_ms = round((time.perf_counter() - started) * 1000, 2)
    log.info("maintenance finished: %s", {k: v for k, v in report.to_dict().items() if k != "errors"})
    return report


async def _purge(deps: Deps, key: keys.MemoryKey, now: float, report: MaintenanceReport) -> None:
    if key.keep_archive:
        report.kept_archive_keys += 1
        return
    cutoff = now - deps.settings.long_term_window_days
    removed = await _guarded(report, f"purge {key.id}", lambda: memory.purge_old_memory(deps, key.id, cutoff))
    if removed is not None:
        report.purged_keys += 1
        report.rows_purged += removed


async def _tend_vaults(deps: Deps, key_id: str, now: float, report: MaintenanceReport) -> None:
    idle_before = now - deps.settings.buffer_idle_hours
    flushed = await _guarded(report, f"flush {key_id}", partial(memory.flush_idle_buffers, deps, key_id, idle_before))
    for result in flushed or []:
        report.buffers_flushed += 1
        report.chunks_flushed += result.chunks_stored
    names = await _guarded(report, f"list vaults {key_id}", partial(memory.vaults_of, deps, key_id))
    for name in names or []:
        report.vaults_seen += 1
        done = await _guarded(
            report,
            f"reconcile {name}",
            partial(memory.reconcile_vault, deps, key_id, session_of(name), embed_limit=deps.settings.reembed_batch),
        )
        if done is not None:
            report.rows_embedded += int(done.get("embedded", 0))
            report.changes_applied += done["applied"]
            report.mirrors_rebuilt += done["rebuilt"]


async def _guarded(report: MaintenanceReport, step: str, work: Callable[[], Awaitable[T]]) -> T | None:
    try:
        return await work()
    except Exception as exc:  # one key or vault must not stop the nightly run for the others
        report.errors.append(f"{step}: {type(exc).__name__}")
        log.warning("maintenance step failed: %s (%s)", step, type(exc).__name__)
        return None

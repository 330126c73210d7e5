"""Bringing a vault's mirror up to date from the vault's change log, and rebuilding it from the
vault when the log cannot (a mirror restored from an older copy, one that never applied any entry).

Syncs of one vault may race (two requests, a background task and the nightly run): the mirror's
compare-and-set makes the loser's batch roll back, and the loser then carries on from wherever the
winner left the vault's mirror."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from memvault.core.deps import Deps
from memvault.core.memory.mirror import MirrorStore
from memvault.core.models import UsageNote
from memvault.core.ports import VaultClient
from memvault.core.vectors import pack

log = logging.getLogger(__name__)

ENTRIES_PER_BATCH = 100
ROWS_PER_BATCH = 200
# A rebuild that has not moved for this long is taken to have died, and the next sync takes over.
STALE_REBUILD_SECONDS = 300.0
# Rounds of one sync call: each applies a batch or learns that another sync did.
MAX_ROUNDS = 10_000


@dataclass(frozen=True)
class SyncOutcome:
    applied: int = 0  # log entries applied
    rebuilt: bool = False


async def sync_mirror(deps: Deps, key_id: str, name: str) -> SyncOutcome:
    """Apply every pending log entry of one vault to the mirror, in order, then trim the log.
    Raises when the mirror or the vault cannot be reached (the entries stay in the log)."""
    vault, mirror = deps.vaults.vault(name), MirrorStore(deps.db)
    applied, rebuilt = 0, False
    for _ in range(MAX_ROUNDS):
        state = await mirror.sync_state(key_id, name)
        if state.synced_seq < 0 and not _stale(deps, state.rebuild_started):
            return SyncOutcome(applied, rebuilt)  # another rebuild is at work; it brings the mirror up to date
        batch = await vault.changes(max(state.synced_seq, 0), ENTRIES_PER_BATCH, ROWS_PER_BATCH)
        if not batch.changes and 0 <= state.synced_seq >= batch.floor:
            return SyncOutcome(applied, rebuilt)
        try:
            if state.synced_seq < 0 or state.synced_seq < batch.floor:
                await rebuild_mirror(deps, key_id, name, state.synced_seq)
                rebuilt = True
                continue
            await mirror.apply(key_id, name, state.synced_seq, batch, deps.clock())
        except Exception:
            if (await mirror.sync_state(key_id, name)).synced_seq != state.synced_seq:
                continue  # another sync moved this vault's mirror first; carry on from there
            raise
        applied += len(batch.changes)
        await vault.trim(batch.changes[-1].seq)
    return SyncOutcome(applied, rebuilt)


async def rebuild_mirror(deps: Deps, key_id: str, name: str, expected: int | None = None) -> None:
    """Recreate one vault's mirror from the vault itself: used after a restore, a format change, or
    when the vault's log was trimmed past what the mirror applied. Entries written meanwhile are
    applied by the next sync, after the rebuild's point."""
    vault, mirror = deps.vaults.vault(name), MirrorStore(deps.db)
    if expected is None:
        expected = (await mirror.sync_state(key_id, name)).synced_seq
    start = await vault.changes(0, 0, 0)
    head = start.head
    # Usage the log holds past what the mirror applied is added when the rebuild ends.
    usage = await _logged_usage(vault, max(expected, start.floor), head)
    token = secrets.randbelow(2**52) + 1
    await mirror.begin_rebuild(key_id, name, expected, token, deps.clock())
    after: str | None = None
    while page := await vault.rows(after, ROWS_PER_BATCH):
        await mirror.rebuild_rows(key_id, name, token, page, deps.clock())
        after = page[-1].id
    buffer = (await vault.changes(head, 0, 0)).buffer
    await mirror.finish_rebuild(key_id, name, token, head, buffer, deps.clock(), usage)
    await vault.trim(head)


async def _logged_usage(vault: VaultClient, after: int, head: int) -> list[UsageNote]:
    notes: list[UsageNote] = []
    while after < head:
        changes = [c for c in (await vault.changes(after, ENTRIES_PER_BATCH, ROWS_PER_BATCH)).changes if c.seq <= head]
        if not changes:
            break
        notes += [change.usage for change in changes if change.usage is not None]
        after = changes[-1].seq
    return notes


async def sync_all(deps: Deps) -> dict[str, int]:
    """Sync every registered vault (local startup, the nightly run); a failing vault is counted and
    left for the next write or run."""
    done = {"vaults": 0, "applied": 0, "rebuilt": 0, "failed": 0}
    for key_id, name in await MirrorStore(deps.db).all_vaults():
        done["vaults"] += 1
        try:
            outcome = await sync_mirror(deps, key_id, name)
        except Exception as exc:  # one vault must not keep the others from syncing
            log.warning("mirror sync failed for one vault: %s", type(exc).__name__)
            done["failed"] += 1
            continue
        done["applied"] += outcome.applied
        done["rebuilt"] += int(outcome.rebuilt)
    return done


def _stale(deps: Deps, started: float | None) -> bool:
    return started is None or deps.clock() - started > STALE_REBUILD_SECONDS


async def mirror_differences(deps: Deps, key_id: str, name: str, page: int = 500) -> list[str]:
    """How one vault's mirror differs from the vault (empty when they hold exactly the same rows
    and the same pending buffer, vectors included): a check for operators and tests."""
    vault, mirror = deps.vaults.vault(name), MirrorStore(deps.db)
    differences: list[str] = []
    held: dict[str, dict[str, object]] = {}
    after: str | None = None
    while rows := await vault.rows(after, page):
        held.update((row.id, row.to_dict()) for row in rows)
        after = rows[-1].id
    after = None
    while rows := await mirror.rows(key_id, name, after, page):
        for row in rows:
            expected = held.pop(row.id, None)
            if expected is None:
                differences.append(f"{name}: {row.id} is in the mirror only")
            elif expected != row.to_dict():
                differences.append(f"{name}: {row.id} differs")
        after = rows[-1].id
    differences += [f"{name}: {row_id} is missing from the mirror" for row_id in held]
    buffer = (await vault.changes(0, 0, 0)).buffer
    if [m.to_dict() for m in buffer.messages] != [m.to_dict() for m in await mirror.buffer(key_id, name)]:
        differences.append(f"{name}: the pending buffers differ")
    elif {v.id: pack(v.embedding) for v in buffer.vectors} != await mirror.buffer_vectors(key_id, name):
        differences.append(f"{name}: the pending buffers' vectors differ")
    return differences

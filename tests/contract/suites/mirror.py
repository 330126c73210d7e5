"""Contract of the mirror over a ``Database`` (local SQLite, and D1 in the Pyodide tier): log
entries apply in order, and a batch that names a ``synced_seq`` which is no longer current rolls
back whole, so racing syncs can neither apply an entry twice nor out of order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from memvault.core.memory.mirror import MirrorStore
from memvault.core.models import BufferState, Change, ChangeBatch, MemoryRow, Message, PendingVector, SearchQuery
from memvault.core.tuning import Tuning
from memvault.core.vectors import unpack

KEY, VAULT = "key_mirror", "key_mirror:core"
EMPTY = BufferState((), 0, 0)


def row(i: int, text: str | None = None) -> MemoryRow:
    return MemoryRow(
        id=f"m-{i:04d}", kind="message", text=text or f"row number {i} about lanterns", role="user", model=None,
        ts_start=float(i), ts_end=float(i), token_count=5, source_ids=(f"t{i}",), content_hash=f"h{i}",
        embedding=(1.0, 0.0, float(i)),
    )


def batch(*changes: Change, buffer: BufferState = EMPTY) -> ChangeBatch:
    return ChangeBatch(changes=changes, buffer=buffer, head=changes[-1].seq, floor=0)


async def ids_of(mirror: MirrorStore) -> list[str]:
    return [r.id for r in await mirror.rows(KEY, VAULT, None, 10_000)]


async def entries_apply_in_order(db: Any) -> None:
    mirror = MirrorStore(db)
    buffer = BufferState((Message("user", "still pending", 9.0, "p1"),), 3, 4)
    await mirror.apply(KEY, VAULT, 0, batch(Change(1, "rows", rows=(row(1), row(2), row(3)))), 1.0)
    await mirror.apply(
        KEY, VAULT, 1,
        batch(Change(2, "delete", ids=("m-0002",)), Change(3, "rows", rows=(row(1, "row one, changed"),)), buffer=buffer),
        2.0,
    )
    stored = {r.id: r for r in await mirror.rows(KEY, VAULT, None, 100)}
    assert sorted(stored) == ["m-0001", "m-0003"] and stored["m-0001"].text == "row one, changed"
    assert stored["m-0003"].embedding == (1.0, 0.0, 3.0)
    assert [m.id for m in await mirror.buffer(KEY, VAULT)] == ["p1"]
    assert (await mirror.sync_state(KEY, VAULT)).synced_seq == 3
    await mirror.apply(KEY, VAULT, 3, batch(Change(4, "clear")), 3.0)
    assert await ids_of(mirror) == [] and await mirror.buffer(KEY, VAULT) == []


async def a_stale_batch_rolls_back_whole(db: Any) -> None:
    mirror = MirrorStore(db)
    await mirror.apply(KEY, VAULT, 0, batch(Change(1, "rows", rows=(row(1),))), 1.0)
    late = batch(Change(1, "rows", rows=(row(7),)), Change(2, "delete", ids=("m-0001",)))
    try:
        await mirror.apply(KEY, VAULT, 0, late, 2.0)
    except Exception:
        pass
    else:
        raise AssertionError("a batch claiming synced_seq 0 after 1 was applied must fail")
    assert await ids_of(mirror) == ["m-0001"]
    assert (await mirror.sync_state(KEY, VAULT)).synced_seq == 1


async def a_rebuild_holds_the_mirror_against_other_writers(db: Any) -> None:
    mirror = MirrorStore(db)
    await mirror.apply(KEY, VAULT, 0, batch(Change(1, "rows", rows=(row(1), row(2)))), 1.0)
    await mirror.begin_rebuild(KEY, VAULT, 1, token=11, now=2.0)
    assert await ids_of(mirror) == []
    assert (await mirror.sync_state(KEY, VAULT)).synced_seq < 0
    for intruder in (
        mirror.rebuild_rows(KEY, VAULT, 12, [row(9)], 3.0),
        mirror.apply(KEY, VAULT, 1, batch(Change(2, "rows", rows=(row(8),))), 3.0),
    ):
        try:
            await intruder
        except Exception:
            continue
        raise AssertionError("only the rebuild holding the claim may write the vault's mirror")
    await mirror.rebuild_rows(KEY, VAULT, 11, [row(2), row(3)], 4.0)
    await mirror.finish_rebuild(KEY, VAULT, 11, 5, EMPTY, 5.0)
    assert await ids_of(mirror) == ["m-0002", "m-0003"]
    assert (await mirror.sync_state(KEY, VAULT)).synced_seq == 5


async def pending_vectors_follow_the_buffer(db: Any) -> None:
    mirror = MirrorStore(db)
    said = tuple(Message("user", f"pending note {i} about harbours", float(i), f"p{i}") for i in range(30))
    vectors = tuple(PendingVector(m.id, (1.0, float(i), 0.0)) for i, m in enumerate(said))
    await mirror.apply(KEY, VAULT, 0, batch(Change(1, "buffer"), buffer=BufferState(said, 90, 1, vectors)), 1.0)
    assert set(await mirror.buffer_vectors(KEY, VAULT)) == {m.id for m in said}  # more than one statement's worth
    found = await mirror.search(KEY, VAULT, SearchQuery(text="zzzz", vector=(1.0, 0.0, 0.0), depth=5), Tuning())
    hits = [c for c in found if c.channel == "vector"]
    assert hits[0].row.source_ids == ("p0",) and hits[0].rank == 1 and len(hits) == 5
    kept = BufferState(said[5:], 75, 2, tuple(PendingVector(v.id, (0.0, 1.0, 0.0)) for v in vectors[5:]))
    await mirror.apply(KEY, VAULT, 1, batch(Change(2, "buffer"), buffer=kept), 2.0)
    assert {k: list(unpack(v)) for k, v in (await mirror.buffer_vectors(KEY, VAULT)).items()} == {
        m.id: [0.0, 1.0, 0.0] for m in said[5:]
    }
    await mirror.begin_rebuild(KEY, VAULT, 2, token=7, now=3.0)
    assert await mirror.buffer_vectors(KEY, VAULT) == {}
    await mirror.finish_rebuild(KEY, VAULT, 7, 3, kept, 4.0)
    assert len(await mirror.buffer_vectors(KEY, VAULT)) == 25
    await mirror.apply(KEY, VAULT, 3, batch(Change(4, "clear")), 5.0)
    assert await mirror.buffer_vectors(KEY, VAULT) == {} and await mirror.buffer(KEY, VAULT) == []


async def registration_lists_a_vault_once(db: Any) -> None:
    mirror = MirrorStore(db)
    for _ in range(3):
        await mirror.register(KEY, f"{KEY}:session:s1", 1.0)
    assert await mirror.vaults_of(KEY) == [VAULT, f"{KEY}:session:s1"]
    assert (KEY, f"{KEY}:session:s1") in await mirror.all_vaults()


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    entries_apply_in_order,
    a_stale_batch_rolls_back_whole,
    a_rebuild_holds_the_mirror_against_other_writers,
    pending_vectors_follow_the_buffer,
    registration_lists_a_vault_once,
]

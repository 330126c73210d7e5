"""A vault's vector channel gives the same answers whether its codes are held in memory or read in
pages from SQL (past its memory budget), and the mirror's bounded scan reads the newest rows."""

from __future__ import annotations

from pathlib import Path

from suites.search_plan import SMALL_CHUNKS, conversation, vector_of

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.memory import vector_channel
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.tables import VAULT_TABLE
from memvault.core.models import SearchQuery
from memvault.core.sql import run_sync
from memvault.core.tuning import Tuning


def filled(path: Path, memory_bytes: int, count: int = 120, tuning: Tuning = SMALL_CHUNKS) -> VaultStore:
    store = VaultStore(SqliteSql(path), VaultLimits(memory_bytes, tuning))
    state = store.append(conversation(count))
    store.attach_embeddings("bag-of-words", {row.id: vector_of(row.text) for row in state.rows})
    return store


def vector_hits(store: VaultStore, text: str) -> list[tuple[str, int, float]]:
    query = SearchQuery(text=text, vector=tuple(vector_of(text)), depth=40)
    return [(c.row.id, c.rank, round(c.score, 5)) for c in store.search(query) if c.channel == "vector"]


QUERIES = ("copper lantern", "glacier willow ember", "Turn 7 of m", "falcon quartz saddle")


def test_codes_read_in_pages_find_what_codes_in_memory_find(tmp_path: Path) -> None:
    small_pages = SMALL_CHUNKS.replace(code_page_rows=17)  # many pages, the last one partial
    in_memory = filled(tmp_path / "a.sqlite3", memory_bytes=1 << 20, tuning=small_pages)
    paged = filled(tmp_path / "b.sqlite3", memory_bytes=0, tuning=small_pages)
    for text in QUERIES:
        assert vector_hits(in_memory, text) == vector_hits(paged, text) != []
    assert in_memory.stats().search_memory_bytes > 0 and paged.stats().search_memory_bytes == 0


def test_an_index_grown_past_its_budget_is_let_go(tmp_path: Path) -> None:
    first = filled(tmp_path / "a.sqlite3", memory_bytes=1 << 20, count=40)
    stats = first.stats()
    budget = (stats.messages + stats.chunks) * (8 + ((stats.dimension or 0) + 7) // 8) + 10  # the codes just fit
    store = VaultStore(SqliteSql(tmp_path / "a.sqlite3"), VaultLimits(budget, SMALL_CHUNKS))
    before = {text: vector_hits(store, text) for text in QUERIES}
    assert store.stats().search_memory_bytes > 0
    state = store.append(conversation(40, prefix="n", start=2_000_000.0))
    store.attach_embeddings("bag-of-words", {row.id: vector_of(row.text) for row in state.rows})
    assert store.stats().search_memory_bytes == 0
    assert any(vector_hits(store, text) != before[text] for text in QUERIES)  # the new rows are found


def test_a_bounded_scan_reads_the_newest_rows_only(tmp_path: Path) -> None:
    from dataclasses import replace

    store = filled(tmp_path / "a.sqlite3", memory_bytes=0)
    code = vector_channel.binary_code(vector_of("copper lantern"))
    coded = run_sync(vector_channel._scan_codes(replace(VAULT_TABLE, vector_scan=30), code, 10), store._sql.execute)
    newest = store._sql.execute("SELECT rowid AS rid FROM rows WHERE code IS NOT NULL ORDER BY ts_end DESC, id DESC")
    assert len(newest) > 60
    assert {r for _, r, _ in coded} == {int(r["rid"]) for r in newest[:30]}


async def test_rows_another_process_writes_are_found_by_the_vector_channel(tmp_path: Path) -> None:
    from memvault.adapters.local.vaults import LocalVaultDirectory

    limits = VaultLimits(1 << 20, SMALL_CHUNKS)
    server, importer = LocalVaultDirectory(tmp_path, limits), LocalVaultDirectory(tmp_path, limits)
    try:
        for directory, prefix in ((server, "m"), (importer, "n")):
            vault = directory.vault("k:core")
            state = await vault.append(conversation(40, prefix=prefix, start=1_000_000.0 if prefix == "m" else 2e6))
            await vault.attach_embeddings("bag-of-words", {row.id: vector_of(row.text) for row in state.rows})
            if prefix == "m":  # the server's codes are in memory before the other process writes
                await vault.search(SearchQuery(text="copper", vector=tuple(vector_of("copper")), depth=5))
        query = SearchQuery(text="lantern", vector=tuple(vector_of("Turn 3 of n: the lantern")), depth=80)
        found = await server.vault("k:core").search(query)
        assert any(s.startswith("n") for c in found if c.channel == "vector" for s in c.row.source_ids)
    finally:
        server.close()
        importer.close()

"""A vault's rows held in memory answer a search as the rows read from SQL do, and follow every
change to the vault file, whoever writes it: nothing forgotten, cleared or replaced is answered
from memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from suites.search_plan import SMALL_CHUNKS, conversation, vector_of

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.memory import resident
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.models import Candidate, SearchQuery

QUERIES = ("copper lantern", "glacier willow ember", "Turn 7 of m", "falcon quartz saddle", "harbour violin")
HELD = 1 << 24


def filled(path: Path, memory_bytes: int, count: int = 120) -> VaultStore:
    store = VaultStore(SqliteSql(path), VaultLimits(memory_bytes, SMALL_CHUNKS))
    state = store.append(conversation(count))
    store.attach_embeddings(
        "bag-of-words",
        {row.id: vector_of(row.text) for row in state.rows},
        {job.id: vector_of(job.text) for job in state.to_embed if job.pending},
    )
    return store


def opened(path: Path, memory_bytes: int = HELD) -> VaultStore:
    """Another handle on the same file, as another process has (it is not told of the first's writes)."""
    return VaultStore(SqliteSql(path), VaultLimits(memory_bytes, SMALL_CHUNKS))


def found(store: VaultStore, text: str, depth: int = 40) -> list[Candidate]:
    return store.search(SearchQuery(text=text, vector=tuple(vector_of(text)), depth=depth))


def shape(candidates: list[Candidate]) -> list[tuple[str, str, int, float, str | None]]:
    return sorted((c.row.id, c.channel, c.rank, round(c.score, 4), c.twin_of) for c in candidates)


def sources(candidates: list[Candidate]) -> set[str]:
    return {source for c in candidates for source in c.row.source_ids}


def test_rows_held_in_memory_answer_as_rows_read_from_sql(tmp_path: Path) -> None:
    held = filled(tmp_path / "a.sqlite3", HELD)
    read = filled(tmp_path / "b.sqlite3", 0)  # no memory at all: rows, vectors and codes come from SQL
    assert held.pending()  # the open chunk's messages take part too
    for text in (*QUERIES, held.pending()[-1].content):
        for prepared in (False, True):
            if prepared:
                held.prepare_search(text, 40)
                read.prepare_search(text, 40)
            assert shape(found(held, text)) == shape(found(read, text)) != [], text
    assert held.stats().search_memory_bytes > 0 and read.stats().search_memory_bytes == 0


def test_a_forgotten_message_is_never_answered_from_memory(tmp_path: Path) -> None:
    store = filled(tmp_path / "a.sqlite3", HELD)
    before = found(store, "Turn 7 of m")
    assert "m7" in sources(before)
    store.forget(["m7"])
    after = found(store, "Turn 7 of m")
    assert "m7" not in sources(after)
    assert all(c.row.id not in {b.row.id for b in before if "m7" in b.row.source_ids} for c in after)


def test_another_process_writes_are_followed_through_the_change_log(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    server = filled(path, HELD)
    assert "m7" in sources(found(server, "Turn 7 of m"))  # its rows are in memory now
    other = opened(path)
    other.forget(["m7"])
    state = other.append(conversation(40, prefix="n", start=2_000_000.0))
    other.attach_embeddings("bag-of-words", {row.id: vector_of(row.text) for row in state.rows})
    assert "m7" not in sources(found(server, "Turn 7 of m"))
    assert any(s.startswith("n") for s in sources(found(server, "Turn 3 of n: the lantern", depth=80)))
    assert shape(found(server, "copper lantern")) == shape(found(opened(path, 0), "copper lantern"))


def test_a_log_trimmed_past_what_memory_holds_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    server = filled(path, HELD)
    found(server, "copper lantern")
    other = opened(path)
    other.forget(["m7", "m8"])
    other.trim(other.generation())  # the entries the server has not seen are gone
    assert not {"m7", "m8"} & sources(found(server, "Turn 7 of m the"))
    assert shape(found(server, "glacier willow ember")) == shape(found(opened(path, 0), "glacier willow ember"))


def test_a_cleared_vault_answers_nothing_from_memory(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    server = filled(path, HELD)
    assert found(server, "copper lantern")
    opened(path).clear(reset=False)
    assert found(server, "copper lantern") == []


def test_rows_past_the_budget_are_read_from_sql_and_held_again_once_they_fit(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    filled(path, 0, count=60)
    codes_only = 1 << 16  # room for the codes of these rows, not for the rows and their vectors
    store = opened(path, codes_only)
    assert shape(found(store, "copper lantern")) == shape(found(opened(path, 0), "copper lantern"))
    assert 0 < store.stats().search_memory_bytes <= codes_only
    store.forget([f"m{i}" for i in range(2, 60)])
    remaining = found(store, "Turn 1 of m")
    assert sources(remaining) <= {"m0", "m1"}
    assert store.stats().search_memory_bytes > 0


def test_a_copy_read_over_several_searches_misses_no_change_made_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident, "LOAD_ROWS", 20)  # 120 messages and their chunks: several pages
    path = tmp_path / "a.sqlite3"
    server = filled(path, HELD)
    for step in range(12):  # its own writes, between the pages it reads
        server.forget([f"m{step * 9 + 4}"])
        state = server.append(conversation(3, prefix=f"n{step}-", start=2_000_000.0 + step * 1000))
        server.attach_embeddings("bag-of-words", {row.id: vector_of(row.text) for row in state.rows})
        for text in ("copper lantern", f"Turn 1 of n{step}-", "Turn 4 of m"):
            server.prepare_search(text, 40)
            assert shape(found(server, text)) == shape(found(opened(path, 0), text)), (step, text)
    # Held in memory by now: the rows and their vectors take far more than the codes could.
    assert server.stats().search_memory_bytes > 100_000


def test_another_process_changes_to_the_pending_buffer_reach_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    server = filled(path, HELD)
    other = opened(path)
    said = conversation(2, prefix="q", start=3_000_000.0)
    steps = [
        lambda: other.append(said),
        lambda: other.attach_embeddings("bag-of-words", {}, {m.id: vector_of(m.content) for m in said}),
        lambda: other.forget(["q0"]),
        lambda: other.flush(),
    ]
    for step in steps:
        step()
        for text in ("Turn 1 of q", "copper lantern"):
            server.prepare_search(text, 40)
            assert found(server, text) == found(opened(path), text), text
    assert "q1" in sources(found(server, "Turn 1 of q")) and "q0" not in sources(found(server, "Turn 0 of q"))

"""The export -> import round trip at the library level: ``export_memory`` records, read back by
``held_from`` and stored by ``store_held`` into an empty data folder, give the same messages, read
through every read path."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memvault.core import memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.errors import Conflict
from memvault.core.memory.messages import messages_from
from memvault.core.memory.transfer import held_from, store_held
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps

NOW = 1_800_000_000.0


def deps_in(folder: Path) -> Deps:
    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(folder), "MEMVAULT_EMBEDDER": "hash"}),
                            Tuning(chunk_tokens=60))
    deps.clock = lambda: NOW
    return deps


@pytest.fixture
async def two(tmp_path: Path) -> AsyncIterator[tuple[Deps, Deps]]:
    first, second = deps_in(tmp_path / "first"), deps_in(tmp_path / "second")
    yield first, second
    await close_local_deps(first)
    await close_local_deps(second)


async def store(deps: Deps, key_id: str, raws: list[dict[str, Any]], session: str | None = None) -> None:
    messages = [m for m in messages_from(raws, NOW) if m is not None]
    await memory.store_conversation(deps, key_id, messages, session)


async def copied(first: Deps, second: Deps, key_id: str) -> str:
    """Export the key's memory from ``first`` into a new key of ``second``; the new key's id."""
    records = [record async for record in memory.export_memory(first, key_id)]
    held = [h for i, r in enumerate(records) if (h := held_from(r, NOW, f"record {i}")) is not None]
    target, _ = await keys.create_key(second.db, "copy", NOW)
    await store_held(second, target.id, held, 7)
    return target.id


async def test_every_read_of_the_copy_answers_as_the_original(two: tuple[Deps, Deps]) -> None:
    first, second = two
    key, _ = await keys.create_key(first.db, "original", NOW)
    turns = [{"role": ("user", "assistant")[i % 2], "id": f"m{i}", "timestamp": NOW - 5000 + i * 10,
              "content": f"Step {i}: the greenhouse tomatoes need {i + 2} litres on day {i}.",
              "metadata": {"bed": i % 3} if i % 4 == 0 else None} for i in range(20)]
    await store(first, key.id, turns)
    await store(first, key.id, [{**turns[4], "id": "m4-again", "timestamp": NOW - 10}])
    await store(first, key.id, [{"role": "user", "id": "g1", "content": "Garden plan: beans by the fence."}], "garden")
    copy = await copied(first, second, key.id)
    for session in (None, "garden"):
        assert await memory.read_memory(second, copy, session, 100, 0) == await memory.read_memory(first, key.id, session, 100, 0)
    for query in ("greenhouse tomatoes litres day 7", "beans fence"):
        original = await memory.search_memory(first, key.id, query, now=NOW, session_id="garden")
        again = await memory.search_memory(second, copy, query, now=NOW, session_id="garden")
        assert [(i.text, i.source_ids, i.window) for i in again.items] == [(i.text, i.source_ids, i.window) for i in original.items]
    assert (await memory.forget(second, copy, ["m4-again"]))["forgotten"] == ["m4-again"]


async def test_a_message_id_held_with_other_text_is_a_conflict_named_and_nothing_else_changes(two: tuple[Deps, Deps]) -> None:
    first, second = two
    key, _ = await keys.create_key(first.db, "original", NOW)
    await store(first, key.id, [{"role": "user", "id": "x1", "content": "The shed key is blue."}])
    records = [record async for record in memory.export_memory(first, key.id)]
    target, _ = await keys.create_key(second.db, "copy", NOW)
    await store(second, target.id, [{"role": "user", "id": "x1", "content": "Something else entirely."}])
    with pytest.raises(Conflict, match="x1"):
        await store_held(second, target.id, [h for r in records if (h := held_from(r, NOW, "record")) is not None], 10)
    page = await memory.read_memory(second, target.id, None, 10, 0)
    assert [entry["content"] for entry in page] == ["Something else entirely."]

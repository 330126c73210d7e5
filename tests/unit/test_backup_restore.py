"""Backup and restore over real local stores: the nightly pass writes a backup to the blob store;
the shared database is lost; ``memvault restore`` rebuilds it from the backup, and every read path
answers as before, with what vaults took in after the backup back in their mirrors."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from local_deps import MakeDeps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backup_round_trip import NOW, WRITER, Filled, credentials, fill, read_backup, read_everything
from memvault import cli
from memvault.core import brain, memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidInput
from memvault.core.models import Message
from memvault.core.operations.backup import backups_index
from memvault.core.operations.restore import restore_backup
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.cron import run_cron
from memvault.runtime.local import build_local_deps, close_local_deps

DAY = 86_400.0


def environ(data: Path, **more: str) -> dict[str, str]:
    return {"MEMVAULT_DATA_DIR": str(data), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_BRAIN_CREDENTIALS": credentials(), **more}


# Small chunks, so a few turns are cut into rows and a tail waits in the buffer.
SMALL_CHUNKS = Tuning(chunk_tokens=60)


def open_deps(data: Path, **more: str) -> Deps:
    """Deps a test opens and closes itself (to lose the database in between, or to hold two)."""
    deps = build_local_deps(load_settings(environ(data, **more)), SMALL_CHUNKS)
    deps.clock = lambda: NOW
    return deps


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    return make_deps({"MEMVAULT_BRAIN_CREDENTIALS": credentials()}, tuning=SMALL_CHUNKS, clock=lambda: NOW)


def lose_database(data: Path) -> None:
    for path in data.glob("memvault.sqlite3*"):
        path.unlink()


def test_restore_into_an_empty_database_answers_every_read_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def back_up() -> tuple[Filled, dict[str, Any], str]:
        deps = open_deps(tmp_path)
        try:
            filled = await fill(deps)
            before = await read_everything(deps, filled)
            report = await run_cron(deps, now=NOW)
            assert report.ok and report.finished and report.backup["complete"], report
            # Written to a vault after the backup: the restore's mirror rebuild must bring it back.
            late = Message(role="user", id="late-1", timestamp=NOW - 10,
                           content="Later note: the Nautilus moved to pier 77 in Porto harbour for repairs.")
            await memory.store_conversation(deps, filled.key_id, [late])
            return filled, before, report.backup["backup_id"]
        finally:
            await close_local_deps(deps)

    async def read_restored(filled: Filled) -> tuple[dict[str, Any], list[str], int]:
        deps = open_deps(tmp_path)
        try:
            after = await read_everything(deps, filled)
            differences = [d for key_id, name in await memory.all_vaults(deps)
                           for d in await memory.mirror_differences(deps, key_id, name)]
            hits = await deps.db.query("SELECT m.id FROM memory m JOIN memory_fts f ON f.rowid = m.seq "
                                       "WHERE memory_fts MATCH ?", ['"INV-20931"'])
            return after, differences, len(hits)
        finally:
            await close_local_deps(deps)

    filled, before, backup_id = asyncio.run(back_up())
    lose_database(tmp_path)
    part_dir = tmp_path / "blobs" / "backups" / backup_id
    assert sorted(p.name for p in part_dir.iterdir())[0] == "part-00001.jsonl"
    for name, value in environ(tmp_path).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["restore", str(part_dir)]) == 0
    assert cli.main(["restore", str(part_dir)]) == 2  # the database is no longer empty

    after, differences, keyword_hits = asyncio.run(read_restored(filled))
    assert {k: v for k, v in after.items() if k != "memory"} == {k: v for k, v in before.items() if k != "memory"}
    assert set(before["memory"]) <= set(after["memory"])
    assert any("pier 77" in text for text in after["memory"])
    assert differences == []
    assert keyword_hits == 2  # the keyword index holds both versions of the invoice again


async def test_rows_written_after_the_watermark_belong_to_the_next_backup(deps: Deps) -> None:
    filled = await fill(deps)
    events_at_start = (await deps.db.query("SELECT MAX(seq) AS top FROM event_log"))[0]["top"]
    # A budget of one unit an invocation: the backup takes its watermark, then stops after a page.
    deps.settings = deps.settings.replace(cron_query_budget=1)
    deps.tuning = deps.tuning.replace(backup_page_rows=2)
    report = await run_cron(deps, now=NOW)
    while not report.backup:
        report = await run_cron(deps, now=NOW)
    assert not report.finished and not report.backup["complete"] and report.stopped_at.startswith("backup after")
    writer_late = await deps.db.query("SELECT COUNT(*) AS n FROM memory")
    await brain.WRITE_FACTS.perform(deps, await brain.auth_of(WRITER, deps), {
        "content": "A fact written while the backup ran.", "scope": "family", "source": "late", "bands": False})
    runs = 0
    while not report.finished:
        report = await run_cron(deps, now=NOW)
        runs += 1
        assert runs < 500
    assert report.backup["complete"] and report.backup["parts"] > 1
    lines = b"".join(await read_backup(deps, report.backup["backup_id"])).decode().splitlines()
    rows = [entry for entry in map(json.loads, lines[1:-1]) if "table" in entry]
    facts = [r["row"] for r in rows if r["table"] == "memory"]
    assert len(facts) == writer_late[0]["n"]
    assert all(f["source"] != "late" for f in facts)
    assert max(r["row"]["seq"] for r in rows if r["table"] == "event_log") == events_at_start
    assert filled.key_id in {r["row"]["id"] for r in rows if r["table"] == "memory_keys"}


async def test_only_the_last_backups_are_kept(tmp_path: Path) -> None:
    deps = open_deps(tmp_path, MEMVAULT_BACKUP_KEEP="2")
    try:
        await fill(deps)
        ids = []
        for day in range(4):
            report = await run_cron(deps, now=NOW + day * DAY)
            assert report.backup["complete"], report
            ids.append(report.backup["backup_id"])
        assert [entry["id"] for entry in await backups_index(deps)] == ids[-2:]
        assert not (tmp_path / "blobs" / "backups" / ids[0]).exists() or not any((tmp_path / "blobs" / "backups" / ids[0]).iterdir())
        assert any((tmp_path / "blobs" / "backups" / ids[-1]).iterdir())
    finally:
        await close_local_deps(deps)


async def test_a_truncated_or_foreign_backup_is_refused_before_anything_is_written(deps: Deps) -> None:
    await fill(deps)
    report = await run_cron(deps, now=NOW)
    lines = b"".join(await read_backup(deps, report.backup["backup_id"])).decode().splitlines()
    with pytest.raises(Conflict):
        await restore_backup(deps, lines)
    with pytest.raises(InvalidInput, match="incomplete"):
        await restore_backup(deps, lines[:-1], force=True)
    with pytest.raises(InvalidInput, match="header"):
        await restore_backup(deps, lines[1:], force=True)
    with pytest.raises(InvalidInput, match="not JSON"):
        await restore_backup(deps, [lines[0], "{oops", lines[-1]], force=True)


async def exported(deps: Deps, key_id: str) -> list[dict[str, Any]]:
    return [record async for record in memory.export_memory(deps, key_id)]


async def test_a_restore_into_an_empty_folder_brings_every_message_back_searchable(tmp_path: Path) -> None:
    first, second = open_deps(tmp_path / "first"), open_deps(tmp_path / "second")
    try:
        filled = await fill(first)
        before = await read_everything(first, filled)
        report = await run_cron(first, now=NOW)
        assert report.backup["messages"] == 14  # 10 in the core vault, 4 in the session's
        lines = b"".join(await read_backup(first, report.backup["backup_id"])).decode().splitlines()
        restored = await restore_backup(second, lines)
        assert (restored.messages, restored.messages_stored, restored.errors) == (14, 14, [])
        # Every read path answers as it did, conversation memory included; the vaults hold the same messages.
        assert await read_everything(second, filled) == before
        assert await exported(second, filled.key_id) == await exported(first, filled.key_id)
        page = await memory.read_memory(second, filled.key_id, "trip", 10, 0)
        assert sorted(entry["id"] for entry in page) == ["b-0", "b-1", "b-2", "b-3"]
        again = await restore_backup(second, lines, force=True)
        assert again.messages_stored == 0 and again.errors == []
    finally:
        await close_local_deps(first)
        await close_local_deps(second)


async def test_messages_a_vault_takes_while_its_pages_are_read_are_not_lost(tmp_path: Path) -> None:
    first, second = open_deps(tmp_path / "first"), open_deps(tmp_path / "second")
    try:
        filled = await fill(first)
        core = f"{filled.key_id}:core"
        pending_before = [m.id for m in await first.vaults.vault(core).pending()]
        assert pending_before, "the test needs messages waiting in the buffer when the backup starts"
        # One page of two messages an invocation: the backup reads the core vault over several.
        first.settings = first.settings.replace(cron_query_budget=1)
        first.tuning = first.tuning.replace(backup_page_rows=2)
        report = await run_cron(first, now=NOW)
        while not str(report.stopped_at).startswith(f"backup after {core} after message"):
            report = await run_cron(first, now=NOW)
            assert not report.finished
        # Meanwhile the vault takes enough to cut the waiting messages into rows, past the position read.
        late = [Message(role="user", id=f"late-{i}", timestamp=NOW - 100 + i,
                        content=f"Later {i}: the Nautilus takes on water casks at pier {60 + i}.") for i in range(8)]
        await memory.store_conversation(first, filled.key_id, late)
        assert not set(pending_before) & {m.id for m in await first.vaults.vault(core).pending()}
        while not report.finished:
            report = await run_cron(first, now=NOW)
        lines = b"".join(await read_backup(first, report.backup["backup_id"])).decode().splitlines()
        ids = [json.loads(line)["message"]["id"] for line in lines if '"message":' in line]
        assert len(ids) == len(set(ids)) or set(ids) >= set(pending_before)
        assert (await restore_backup(second, lines)).errors == []
        held = {r["source_ids"][0] if r["type"] == "message" else r["id"]
                for r in await exported(second, filled.key_id) if r["type"] != "chunk"}
        assert {f"b-{i}" for i in range(10)} | set(pending_before) <= held
    finally:
        await close_local_deps(first)
        await close_local_deps(second)


async def test_a_backup_of_the_first_format_still_restores(tmp_path: Path) -> None:
    first, second = open_deps(tmp_path / "first"), open_deps(tmp_path / "second")
    try:
        filled = await fill(first)
        report = await run_cron(first, now=NOW)
        lines = b"".join(await read_backup(first, report.backup["backup_id"])).decode().splitlines()
        header, *rows, end = [json.loads(line) for line in lines]
        header["backup"]["format"] = 1
        del end["end"]["messages"]
        old = [json.dumps(entry) for entry in [header, *(r for r in rows if "message" not in r), end]]
        restored = await restore_backup(second, old)
        assert restored.errors == [] and restored.messages == 0
        assert (await keys.authenticate(second.db, filled.key_secret)).id == filled.key_id
    finally:
        await close_local_deps(first)
        await close_local_deps(second)


async def test_a_backup_with_a_broken_message_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    first, second = open_deps(tmp_path / "first"), open_deps(tmp_path / "second")
    try:
        await fill(first)
        report = await run_cron(first, now=NOW)
        lines = b"".join(await read_backup(first, report.backup["backup_id"])).decode().splitlines()
        number = next(i for i, line in enumerate(lines) if '"message":' in line)
        broken = json.loads(lines[number])
        broken["message"]["role"] = "narrator"
        with pytest.raises(InvalidInput, match=rf"backup line {number + 1}\.role"):
            await restore_backup(second, [*lines[:number], json.dumps(broken), *lines[number + 1 :]])
        del broken["message"]["key_id"]
        with pytest.raises(InvalidInput, match="a message of no key"):
            await restore_backup(second, [*lines[:number], json.dumps(broken), *lines[number + 1 :]])
        with pytest.raises(InvalidInput, match="counts differ"):
            await restore_backup(second, [*lines[:number], *lines[number + 1 :]])
        # A body line may only bring back the body of a fact the backup holds, never another blob.
        body = next(i for i, line in enumerate(lines) if '"blob":' in line)
        stray = json.loads(lines[body])
        stray["blob"]["key"] = "backups/index.json"
        with pytest.raises(InvalidInput, match="a body no fact of it names"):
            await restore_backup(second, [*lines[:body], json.dumps(stray), *lines[body + 1 :]])
        assert await second.db.query("SELECT id FROM memory_keys") == []
    finally:
        await close_local_deps(first)
        await close_local_deps(second)

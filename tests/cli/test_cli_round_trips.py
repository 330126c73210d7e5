"""The round trips as a user runs them, each command a process of its own: `memvault export` ->
`memvault import`, and `memvault backup` -> `memvault restore`, into an empty data folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import BASE, assert_fails, conversation, created_key, memvault, records, write_jsonl

from memvault.adapters.local.vaults import vault_filename

Filled = tuple[Path, str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """The test conversation imported once into a data folder by the CLI; its key, and its export."""
    work = tmp_path_factory.mktemp("imported")
    folder = work / "first"
    key = created_key(folder, work)
    source = write_jsonl(work / "chat.jsonl", conversation())
    ran = memvault("import", str(source), "--key", key, "--data-dir", str(folder), cwd=work)
    assert ran.code == 0, ran.err
    # The repeated text is one more occurrence of t2, not a new message.
    assert json.loads(ran.out) == {"messages_read": 17, "messages_accepted": 16}
    exported = memvault("export", "--key", key, "--data-dir", str(folder), cwd=work)
    assert exported.code == 0, exported.err
    return folder, key, records(exported.out)


@pytest.fixture
def filled(imported: Filled, tmp_path: Path) -> Filled:
    """A copy of the imported data folder that this test alone writes to; its key, and its export."""
    source, key, exported = imported
    folder = tmp_path / "first"
    shutil.copytree(source, folder)
    return folder, key, exported


def messages_of(exported: list[dict[str, Any]], vault: str) -> list[dict[str, Any]]:
    return [r for r in exported if r["vault"] == vault and r["type"] in ("message", "pending")]


def message_id(record: dict[str, Any]) -> str:
    return str(record["source_ids"][0] if record["type"] == "message" else record["id"])


def test_an_export_holds_every_message_with_its_ids_times_metadata_and_session(filled: Filled) -> None:
    _, _, exported = filled
    core, trip = messages_of(exported, "core"), messages_of(exported, "session:trip")
    assert [message_id(r) for r in core] == [f"t{i}" for i in range(14)]
    assert {r["type"] for r in core} == {"message", "pending"} and any(r["type"] == "chunk" for r in exported)
    assert [message_id(r) for r in trip] == ["s1", "s2"] and trip[1]["timestamp"] == 1_714_557_600.0
    by_id = {message_id(r): r for r in core}
    assert by_id["t2"]["said_again"] == ["t2-again"]
    assert by_id["t3"]["metadata"] == {"chat": 42, "turn": 3, "tags": ["boat", "3"]} and by_id["t4"]["metadata"] is None
    assert by_id["t5"]["model"] == "gpt-test" and by_id["t5"]["role"] == "assistant"
    stored_times = {message_id(r): r["ts_start"] for r in core if r["type"] == "message"}
    assert stored_times and all(stored_times[i] == BASE + int(i[1:]) * 60 for i in stored_times if i != "t2")


def test_export_then_import_into_an_empty_folder_gives_back_the_same_messages(filled: Filled, tmp_path: Path) -> None:
    _, _, exported = filled
    dump = write_jsonl(tmp_path / "export.jsonl", exported)
    second = tmp_path / "second"
    key = created_key(second, tmp_path)
    ran = memvault("import", str(dump), "--key", key, "--data-dir", str(second), cwd=tmp_path)
    assert ran.code == 0, ran.err
    assert json.loads(ran.out) == {"messages_read": 16, "messages_accepted": 16}
    again = memvault("export", "--key", key, "--data-dir", str(second), cwd=tmp_path)
    # Chunks included: the messages went back in the order taken, so the same chunks were cut.
    assert records(again.out) == exported
    repeated = memvault("import", str(dump), "--key", key, "--data-dir", str(second), cwd=tmp_path)
    assert json.loads(repeated.out) == {"messages_read": 16, "messages_accepted": 0}
    assert records(memvault("export", "--key", key, "--data-dir", str(second), cwd=tmp_path).out) == exported
    # The said-again id is an id of the copy too: forgetting by it forgets t2.
    forgot = memvault("forget", "t2-again", "--key", key, "--data-dir", str(second), cwd=tmp_path)
    assert json.loads(forgot.out) == {"forgotten": ["t2-again"], "not_found": []}
    assert "berth 32 " not in memvault("export", "--key", key, "--data-dir", str(second), cwd=tmp_path).out


def test_an_export_piped_into_an_import_of_a_session(filled: Filled, tmp_path: Path) -> None:
    first, key, exported = filled
    only_core = "".join(json.dumps(r) + "\n" for r in exported if r["vault"] == "core")
    ran = memvault("import", "-", "--session", "copy", "--key", key, "--data-dir", str(first), cwd=tmp_path, stdin=only_core)
    assert_fails(ran, 2, "belongs to vault 'core', not to session 'copy'", "nothing was imported")
    plain = "".join(json.dumps({"role": r["role"], "content": "Copied. " + r["content"], "id": r["id"]}) + "\n"
                    for r in exported if r["type"] == "pending")
    ran = memvault("import", "-", "--session", "copy", "--key", key, "--data-dir", str(first), cwd=tmp_path, stdin=plain)
    assert ran.code == 0, ran.err
    found = memvault("search", "ketch Albatross berth", "--session", "copy", "--key", key, "--data-dir", str(first), cwd=tmp_path)
    assert any(item["vault"] == "session" for item in json.loads(found.out)["items"]), found.out


def test_backup_then_restore_into_an_empty_folder_brings_every_message_back(filled: Filled, tmp_path: Path) -> None:
    first, key, exported = filled
    backup = memvault("backup", "--data-dir", str(first), cwd=tmp_path)
    assert backup.code == 0, backup.err
    parts = Path(backup.out.strip())
    assert parts.is_dir() and sorted(p.name for p in parts.iterdir()) == ["part-00001.jsonl"]
    second = tmp_path / "second"
    ran = memvault("restore", str(parts), "--data-dir", str(second), cwd=tmp_path)
    assert ran.code == 0, ran.err
    report = json.loads(ran.out)
    assert (report["messages"], report["messages_stored"], report["errors"]) == (16, 16, [])
    # The key came back with the database: the same secret reads the same messages.
    assert records(memvault("export", "--key", key, "--data-dir", str(second), cwd=tmp_path).out) == exported
    found = memvault("search", "which berth is number 37", "--key", key, "--data-dir", str(second), cwd=tmp_path)
    assert any("t7" in item["source_ids"] for item in json.loads(found.out)["items"]), found.out
    # The command it offers names the folder it refused, not the default one (perhaps a live server's).
    assert_fails(memvault("restore", str(parts), "--data-dir", str(second), cwd=tmp_path), 2, "not empty",
                 f"--data-dir {second.resolve()} --force")
    forced = memvault("restore", str(parts), "--force", "--data-dir", str(second), cwd=tmp_path)
    assert forced.code == 0 and json.loads(forced.out)["messages_stored"] == 0


def test_a_restore_that_stops_part_way_says_so_and_a_forced_run_finishes_it(filled: Filled, tmp_path: Path) -> None:
    first, key, exported = filled
    parts = memvault("backup", "--data-dir", str(first), cwd=tmp_path).out.strip()
    key_id = json.loads(memvault("keys", "list", "--json", "--data-dir", str(first), cwd=tmp_path).out)[0]["id"]
    second = tmp_path / "second"
    # A directory where the session vault's file belongs: that vault cannot be opened.
    blocked = second / "vaults" / vault_filename(f"{key_id}:session:trip")
    blocked.mkdir(parents=True)
    ran = memvault("restore", parts, "--data-dir", str(second), cwd=tmp_path)
    assert_fails(ran, 1, "the restore is incomplete", f"messages of {key_id}",
                 f"memvault restore {parts} --data-dir {second.resolve()} --force")
    shutil.rmtree(blocked)
    finished = memvault("restore", parts, "--force", "--data-dir", str(second), cwd=tmp_path)
    assert finished.code == 0, finished.err
    assert json.loads(finished.out)["errors"] == []
    assert records(memvault("export", "--key", key, "--data-dir", str(second), cwd=tmp_path).out) == exported

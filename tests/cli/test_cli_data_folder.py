"""Which data folder a command opens: ./.memvault in the working folder by default,
MEMVAULT_DATA_DIR, or --data-dir (which wins); every command that opens data takes --data-dir and
says on stderr, as an absolute path, which folder it opened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_support import Shell, assert_fails, conversation, write_jsonl


def opened(err: str) -> list[str]:
    return [line.removeprefix("data folder: ") for line in err.splitlines() if line.startswith("data folder: ")]


def test_the_default_is_memvault_in_the_working_folder_and_another_folder_is_not_made(shell: Shell, tmp_path: Path) -> None:
    created = shell("keys", "create")
    assert created.code == 0 and opened(created.err) == [str(tmp_path / "work" / ".memvault")]
    key = created.out.strip()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.chdir(elsewhere)
    # The newcomer's trap: the key belongs to the folder it was created in; the message says where to look.
    error = assert_fails(shell("search", "anything", "--key", key), 2, "no memvault data in", str(elsewhere / ".memvault"))
    assert "--data-dir" in error and "MEMVAULT_DATA_DIR" in error
    assert not (elsewhere / ".memvault").exists()
    found = shell("search", "anything", "--key", key, "--data-dir", "../work/.memvault")
    assert found.code == 0 and opened(found.err) == [str(tmp_path / "work" / ".memvault")]


def test_a_key_of_another_folder_is_refused_with_the_folder_named(shell: Shell, tmp_path: Path) -> None:
    key = shell("keys", "create", "--data-dir", "one").out.strip()
    assert shell("keys", "create", "--data-dir", "two").code == 0
    assert_fails(shell("stats", "--key", key, "--data-dir", "two"), 2, "unknown or revoked memory key",
                 str(tmp_path / "work" / "two"), "works only with the data folder it was created in")


def test_the_environment_names_the_folder_and_the_option_wins(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(tmp_path / "from-env"))
    assert opened(shell("keys", "create").err) == [str(tmp_path / "from-env")]
    assert_fails(shell("keys", "list", "--data-dir", "from-option"), 2, "no memvault data in")
    assert opened(shell("keys", "create", "--data-dir", "from-option").err) == [str(tmp_path / "work" / "from-option")]
    listed = shell("keys", "list", "--json")
    assert len(json.loads(listed.out)) == 1 and opened(listed.err) == [str(tmp_path / "from-env")]


def test_every_command_that_opens_data_takes_the_option_and_reports_what_it_did(shell: Shell, tmp_path: Path) -> None:
    folder = str(tmp_path / "work" / "data")
    key = shell("keys", "create", "--data-dir", "data", "--label", "reporting").out.strip()
    source = write_jsonl(tmp_path / "chat.jsonl", conversation())
    backup = shell("backup", "--data-dir", "data")
    commands = [
        ("keys", "list"),
        ("import", str(source), "--key", key),
        ("export", "--key", key),
        ("search", "kayak paddles", "--key", key),
        ("forget", "t1", "--key", key),
        ("stats", "--key", key),
        ("check",),
        ("maintenance",),
        ("backup",),
    ]
    for command in commands:
        ran = shell(*command, "--data-dir", "data")
        assert ran.code == 0, (command, ran.err)
        assert opened(ran.err) == [folder], command
        # Beside the folder, a line that says what the command did.
        assert len([line for line in ran.err.splitlines() if line and not line.startswith("data folder")]) >= 1, command
    restored = shell("restore", backup.out.strip(), "--data-dir", "restored")
    assert restored.code == 0 and opened(restored.err) == [str(tmp_path / "work" / "restored")]
    revoked = shell("keys", "revoke", json.loads(shell("keys", "list", "--json", "--data-dir", "data").out)[0]["id"],
                    "--data-dir", "data")
    assert revoked.code == 0 and "revoked key key_" in revoked.err and opened(revoked.err) == [folder]


def test_a_data_folder_that_cannot_be_used_is_one_line(shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a_file = tmp_path / "work" / "notes.txt"
    a_file.write_text("not a folder")
    assert_fails(shell("keys", "list", "--data-dir", str(a_file)), 2, "is a file")
    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(a_file))
    assert_fails(shell("keys", "create"), 2, f"the data folder {a_file} is a file, not a folder")
    monkeypatch.delenv("MEMVAULT_DATA_DIR")
    broken = tmp_path / "work" / "broken"
    broken.mkdir()
    (broken / "memvault.sqlite3").write_bytes(b"this is no database " * 100)
    assert_fails(shell("keys", "list", "--data-dir", "broken"), 2, f"the data in {broken} cannot be used")

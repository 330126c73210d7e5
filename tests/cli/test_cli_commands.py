"""What each command prints: data on stdout (a created key alone on its line, JSON where a script
reads it), a report on stderr; help on every command and option; search -> forget by the ids
search prints."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import click
from cli_support import Shell, assert_fails, conversation, every_command, memvault, records, write_jsonl

from memvault import cli


def test_version_and_help_on_every_command_and_option(tmp_path: Path) -> None:
    ran = memvault("--version", cwd=tmp_path)
    assert (ran.code, ran.out.strip()) == (0, f"memvault {version('memvault')}")
    commands = every_command(cli.cli)
    assert {name for name, _ in commands} >= {
        "memvault serve", "memvault keys create", "memvault keys list", "memvault keys revoke", "memvault import",
        "memvault export", "memvault search", "memvault forget", "memvault stats", "memvault maintenance",
        "memvault backup", "memvault restore", "memvault check", "memvault mcp",
    }
    for name, command in commands:
        assert command.help and command.get_short_help_str(limit=60).endswith("."), name
        for option in (p for p in command.params if isinstance(p, click.Option)):
            assert option.help, f"{name} {option.opts}"
        if not isinstance(command, click.Group) and name.split()[1] not in ("serve", "mcp"):
            assert "--data-dir" in {o for p in command.params for o in p.opts}, name
    assert "--port" in memvault("serve", "--help", cwd=tmp_path).out


def test_keys_print_the_secret_alone_and_json_on_request(shell: Shell) -> None:
    created = shell("keys", "create", "--label", "laptop")
    assert created.code == 0 and created.out.count("\n") == 1 and created.out.startswith("mk_")
    assert "shown once" in created.err
    as_json = shell("keys", "create", "--label", "phone", "--keep-archive", "--json")
    made = json.loads(as_json.out)
    assert made["key"].startswith("mk_") and made["label"] == "phone" and made["keep_archive"] is True
    listed = shell("keys", "list")
    assert [line.split("\t")[1:] for line in listed.out.splitlines()] == [["active", "laptop"], ["active", "phone"]]
    assert created.out.strip() not in listed.out and "2 keys, 2 active" in listed.err
    revoked = shell("keys", "revoke", made["id"], "--json")
    assert json.loads(revoked.out)["id"] == made["id"] and f"revoked key {made['id']}" in revoked.err
    assert [k["state"] for k in json.loads(shell("keys", "list", "--json").out)] == ["active", "revoked"]


def test_a_key_granted_brain_scopes_lists_its_grant_and_a_scope_the_deployment_lacks_is_refused(shell: Shell) -> None:
    granted = shell("keys", "create", "--label", "bot", "--brain-scopes", "family, shared", "--brain-writer", "--json")
    made = json.loads(granted.out)
    assert (made["brain_scopes"], made["brain_writer"]) == (["family", "shared"], True)
    assert "brain writer of family,shared" in granted.err
    shell("keys", "create", "--label", "plain")
    listed = shell("keys", "list")
    assert [line.split("\t")[1:] for line in listed.out.splitlines()] == [
        ["active", "bot", "family,shared+writer"], ["active", "plain"]]
    assert_fails(shell("keys", "create", "--brain-scopes", "family,nowhere"), 2, "brain_scopes[1]")
    assert_fails(shell("keys", "create", "--brain-writer"), 2, "brain_writer")
    assert len(json.loads(shell("keys", "list", "--json").out)) == 2


def test_search_prints_the_ids_forget_takes(shell: Shell, tmp_path: Path) -> None:
    key = shell("keys", "create").out.strip()
    source = write_jsonl(tmp_path / "chat.jsonl", conversation())
    imported = shell("import", str(source), "--key", key)
    assert json.loads(imported.out) == {"messages_read": 17, "messages_accepted": 16}
    assert "imported 16 new messages of 17 read into core, session trip" in imported.err
    found = shell("search", "ketch Albatross berth 37", "--key", key)
    answer = json.loads(found.out)  # as POST /v1/memory/search answers
    results = answer["items"]
    assert set(answer) == {"items", "tokens", "metrics", "facts", "receipt"} and answer["facts"] == []
    assert answer["tokens"] == sum(r["tokens"] for r in results)
    assert isinstance(answer["receipt"], str)
    assert results and all(set(r) >= {"score", "window", "text", "source_ids", "vault"} for r in results)
    assert "results" in found.err or "result" in found.err
    hit = next(r for r in results if "berth 37" in r["text"])
    assert "t7" in hit["source_ids"]
    forgot = shell("forget", *hit["source_ids"], "--key", key)
    assert json.loads(forgot.out) == {"forgotten": hit["source_ids"], "not_found": []}
    assert f"forgot {len(hit['source_ids'])} message" in forgot.err
    again = json.loads(shell("search", "ketch Albatross berth 37", "--key", key).out)["items"]
    assert not any("berth 37 " in r["text"] for r in again)
    missing = shell("forget", "t7", "--key", key)
    assert json.loads(missing.out) == {"forgotten": [], "not_found": ["t7"]} and "not found: t7" in missing.err
    session = json.loads(shell("search", "kayak paddles", "--session", "trip", "--key", key).out)["items"]
    assert any(r["vault"] == "session" and r["source_ids"] in (["s1"], ["s2"], ["s1", "s2"]) for r in session)
    assert_fails(shell("search", "zebra", "--key", key, "--limit", "0"), 2, "limit must be a whole number from 1 to 500")
    assert_fails(shell("search", "zebra", "--key", key, "--budget", "lots"), 2, "budget_tokens must be a whole number")
    assert_fails(shell("forget", "x", "--session", "a" * 201, "--key", key), 2, "session_id must be 1 to 200")


def test_export_is_pure_jsonl_and_the_operator_commands_report(shell: Shell, tmp_path: Path) -> None:
    key = shell("keys", "create", "--keep-archive").out.strip()  # the conversation is older than the archive window
    shell("import", str(write_jsonl(tmp_path / "chat.jsonl", conversation())), "--key", key)
    exported = shell("export", "--key", key)
    assert all(isinstance(r, dict) for r in records(exported.out))
    assert "exported 16 messages" in exported.err
    stats = json.loads(shell("stats", "--key", key).out)
    assert set(stats["vaults"]) == {"core", "session:trip"}
    maintenance = shell("maintenance")
    assert json.loads(maintenance.out.splitlines()[-1])["event"] == "memvault.maintenance"
    assert "maintenance: " in maintenance.err
    checked = shell("check")
    assert json.loads(checked.out) == {"differences": 0, "rebuilt": 0} and "checked 2 vaults" in checked.err
    backup = json.loads(shell("backup", "--json").out)
    assert backup["complete"] and backup["messages"] == 16 and Path(backup["folder"]).is_dir()
    assert_fails(shell("restore", backup["folder"]), 2, "not empty", "--force")


def test_a_group_without_a_command_shows_its_help(shell: Shell) -> None:
    for args in ([], ["keys"]):
        ran = shell(*args)
        assert ran.code == 2 and "Commands:" in ran.err and ran.errors == [] and ran.out == ""
    assert "create" in shell("keys").err


def test_an_import_warns_of_messages_past_retention_and_maintenance_counts_them_purged(shell: Shell) -> None:
    key = shell("keys", "create").out.strip()
    old = {"role": "user", "content": "The boiler was serviced.", "id": "aged", "timestamp": "2020-01-05T09:00:00Z"}
    new = {"role": "user", "content": "The boiler is due again.", "id": "fresh"}
    imported = shell("import", str(write_jsonl(Path("old.jsonl"), [old, new])), "--key", key)
    assert imported.code == 0 and "warning: 1 message said more than 90 days ago" in imported.err, imported.err
    ran = shell("maintenance")
    assert ran.code == 0 and json.loads(ran.out)["rows_purged"] == 1, ran.out  # the pending message counts
    assert [r["id"] for r in records(shell("export", "--key", key).out)] == ["fresh"]
    archived = shell("keys", "create", "--keep-archive").out.strip()
    kept = shell("import", str(write_jsonl(Path("old2.jsonl"), [{**old, "id": "aged2"}])), "--key", archived)
    assert kept.code == 0 and "warning" not in kept.err

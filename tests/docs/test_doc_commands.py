"""The blocks of docs/brain.md, docs/brain-sync.md and docs/clients.md, run as a reader runs them
from the clone: the brain-token commands of "Walls" on a data folder of their own, the folder sync of
"Push and pull" and the Python client of "Over HTTP from Python" against the real local server, with
the reader's URL and token where the page shows placeholders; the credential examples of "Walls"
read by memvault's own parsers."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
from doc_pages import DOCS, ROOT, blocks_under

from memvault.core.brain.scopes import parse_access_users, parse_credentials
from memvault.core.settings import load_settings

sys.path.insert(0, str(ROOT / "tests" / "api"))
from test_local_server import free_port, server

PAGE = DOCS / "brain.md"
SYNC_PAGE = DOCS / "brain-sync.md"
VENV_BIN = ROOT / ".venv" / "bin"


def reader_shell(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return {**env, "PATH": f"{VENV_BIN}{os.pathsep}{env['PATH']}", "MEMVAULT_DATA_DIR": str(data_dir),
            "MEMVAULT_EMBEDDER": "hash"}


def run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (line, done.stderr)
    return done


def test_the_brain_token_commands_run_as_written(tmp_path: Path) -> None:
    (block,) = [b for b in blocks_under(PAGE, "Walls") if b.kind == "sh"]
    create, listing, revoke = block.text.splitlines()
    # From the reader's clone (its .venv), in a shell without the venv's bin on the PATH.
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)
    shell = reader_shell(tmp_path / "data")
    env = {**shell, "PATH": os.pathsep.join(p for p in shell["PATH"].split(os.pathsep) if Path(p) != VENV_BIN)}
    token = run(create, tmp_path, env).stdout.strip()
    assert token.startswith("bt_")
    (row,) = run(listing, tmp_path, env).stdout.splitlines()
    credential_id, state, name, role, scopes = row.split("\t")
    assert (state, name, role, scopes) == ("active", "claude", "writer", "family,shared")
    assert "key_…" in revoke
    run(revoke.replace("key_…", credential_id), tmp_path, env)
    assert run(listing, tmp_path, env).stdout.split("\t")[1] == "revoked"


def test_the_folder_sync_runs_as_written(tmp_path: Path) -> None:
    (block,) = blocks_under(SYNC_PAGE, "Push and pull")
    push, pull = block.text.splitlines()
    data = tmp_path / "data"
    env = reader_shell(data)
    token = run("memvault brain-token create --scopes shared --writer --name notes", tmp_path, env).stdout.strip()
    # The reader's clone: the page runs `.venv/bin/python scripts/…` from its root, here beside the notes.
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / "scripts").symlink_to(ROOT / "scripts")
    note = tmp_path / "notes" / "boat.md"
    note.parent.mkdir()
    note.write_text("The dinghy's outboard takes two-stroke oil mixed 1:50.\n")
    with server(data, free_port(), env) as url:
        def as_reader(line: str) -> str:
            assert "MEMVAULT_URL=https://…" in line and "MEMVAULT_BRAIN_TOKEN=…" in line
            return line.replace("https://…", url).replace("MEMVAULT_BRAIN_TOKEN=…", f"MEMVAULT_BRAIN_TOKEN={token}")

        run(as_reader(push), tmp_path, env)
        found = httpx.post(f"{url}/v1/brain/facts/search", json={"query": "outboard oil"},
                           headers={"Authorization": f"Bearer {token}"}).json()
        assert [r["source"] for r in found["results"]] == ["files:boat.md"], found
        shutil.rmtree(note.parent)  # another machine: the folder, manifest and all, comes from the brain
        run(as_reader(pull), tmp_path, env)
    assert note.read_text() == "The dinghy's outboard takes two-stroke oil mixed 1:50.\n"


def test_the_credential_examples_are_what_memvault_reads() -> None:
    credentials, users = (b.text for b in blocks_under(PAGE, "Walls") if b.kind == "json")
    # The page shortens each sha256 to its first characters: the reader puts a whole digest there.
    tokens = {"9f86d0": "test", "60303a": "test2"}
    for prefix, token in tokens.items():
        digest = hashlib.sha256(token.encode()).hexdigest()
        assert digest.startswith(prefix)
        credentials = credentials.replace(f'"{prefix}..."', f'"{digest}"')
    scopes = load_settings({}).brain_scopes
    parsed = {c.name: c for c in parse_credentials(credentials, scopes).values()}
    assert (parsed["telegram-bot"].writer, parsed["brain-writer"].writer) == (False, True)
    assert parsed["telegram-bot"].scopes == {"family", "shared"} and parsed["brain-writer"].scopes == set(scopes)
    mapped = parse_access_users(users, credentials, scopes)
    assert mapped == {"alice@example.com": parsed["telegram-bot"], "bob@example.com": "key_3f9c0d1e2a4b5c6d"}


CLIENTS_PAGE = DOCS / "clients.md"


def test_the_http_client_example_runs_as_written(tmp_path: Path) -> None:
    (block,) = blocks_under(CLIENTS_PAGE, "Over HTTP from Python")
    data = tmp_path / "data"
    env = reader_shell(data)
    key = run("memvault keys create --label client", tmp_path, env).stdout.strip()
    with server(data, free_port(), env) as url:
        script = block.text.replace("http://127.0.0.1:8787", url)
        assert script != block.text
        done = subprocess.run([str(VENV_BIN / "python"), "-c", script], cwd=tmp_path,
                              env={**env, "MEMVAULT_KEY": key}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "My cat is called Biscuit."

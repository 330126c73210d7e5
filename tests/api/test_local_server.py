"""The real local server as a user runs it: `memvault keys create`, `memvault serve`, HTTP, restart."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

from local_http import memvault_serve

MEMVAULT = Path(sys.executable).with_name("memvault")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "hash"}


@contextmanager
def server(data_dir: Path, port: int, env: dict[str, str] | None = None, output: IO[bytes] | None = None) -> Iterator[str]:
    """The server on ``port`` until the block ends; ``output`` takes all it prints, if given."""
    with memvault_serve(env or environment(data_dir), output, port) as url:
        yield url


def test_store_search_survives_a_restart(tmp_path: Path) -> None:
    created = subprocess.run(
        [str(MEMVAULT), "keys", "create", "--label", "restart"], env=environment(tmp_path), capture_output=True, text=True, check=True
    )
    key = created.stdout.strip()
    assert key.startswith("mk_")
    auth = {"Authorization": f"Bearer {key}"}
    port = free_port()
    messages = [{"role": "user", "content": f"Fact {i}: the lighthouse keeper logs storm number {i}.", "timestamp": 1.7e9 + i} for i in range(60)]
    messages.append({"role": "user", "content": "The ferry leaves from pier nine.", "timestamp": 1.7e9 + 100})
    with server(tmp_path, port) as url:
        response = httpx.post(f"{url}/v1/memory", json={"messages": messages}, headers=auth)
        assert response.status_code == 200, response.text
        before = httpx.get(f"{url}/v1/memory/stats", headers=auth).json()["vaults"]
    with server(tmp_path, port) as url:
        # The vaults as they were (the read cache's counts are each process's own).
        assert httpx.get(f"{url}/v1/memory/stats", headers=auth).json()["vaults"] == before
        for query, expected in [("lighthouse storm number 42", "storm number 42."), ("ferry pier", "pier nine")]:
            found = httpx.post(f"{url}/v1/memory/search", json={"query": query, "now": 1.7e9 + 200}, headers=auth).json()
            assert any(expected in item["text"] for item in found["items"]), (query, found)
    listed = subprocess.run([str(MEMVAULT), "keys", "list"], env=environment(tmp_path), capture_output=True, text=True, check=True)
    assert "restart" in listed.stdout and key not in listed.stdout


def test_cli_import_export_search(tmp_path: Path) -> None:
    env = environment(tmp_path)
    key = subprocess.run([str(MEMVAULT), "keys", "create"], env=env, capture_output=True, text=True, check=True).stdout.strip()
    source = tmp_path / "messages.jsonl"
    lines = [f'{{"role": "user", "content": "Imported line {i} mentions the orchard at Fenwick.", "timestamp": {1.6e9 + i}}}' for i in range(30)]
    source.write_text("\n".join(lines) + '\n{"role": "user", "content": "never stored", "memory": false}\n')
    imported = subprocess.run([str(MEMVAULT), "import", str(source), "--key", key], env=env, capture_output=True, text=True, check=True)
    assert '"messages_accepted": 30' in imported.stdout
    exported = subprocess.run([str(MEMVAULT), "export", "--key", key], env=env, capture_output=True, text=True, check=True)
    assert exported.stdout.count('"type": "message"') + exported.stdout.count('"type": "pending"') == 30
    assert "never stored" not in exported.stdout
    searched = subprocess.run([str(MEMVAULT), "search", "orchard Fenwick line 7", "--key", key], env=env, capture_output=True, text=True, check=True)
    assert "line 7 " in searched.stdout
    bad = subprocess.run([str(MEMVAULT), "search", "x", "--key", "mk_wrong"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown or revoked" in bad.stderr

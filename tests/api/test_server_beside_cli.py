"""A server and the CLI on one data folder at once: a key revoked, or its limits lowered, with
`memvault keys revoke` and `memvault limits` in another process binds the running server from its
next call (no restart, no wait for a cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from local_http import memvault_serve

MEMVAULT = str(Path(sys.executable).with_name("memvault"))


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([MEMVAULT, *args], env=env, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_limits_and_revocation_from_the_cli_bind_a_running_server_at_its_next_call(tmp_path: Path) -> None:
    env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}
    made = json.loads(_cli(env, "keys", "create", "--label", "beside", "--json"))
    secret, key_id = made["key"], made["id"]
    with memvault_serve(env) as url, httpx.Client(base_url=url, timeout=30,
                                                  headers={"Authorization": f"Bearer {secret}"}) as client:
        def search() -> int:
            return client.post("/v1/memory/search", json={"query": "which pier?"}).status_code

        assert [search() for _ in range(4)] == [200] * 4  # looked up, and answered, before the change
        _cli(env, "limits", key_id, "--requests-per-minute", "2")
        statuses = [search() for _ in range(4)]
        # This minute's count may have started before the change: at most two pass, the rest wait.
        assert statuses.count(429) >= 2 and set(statuses) <= {200, 429}, statuses
        _cli(env, "keys", "revoke", key_id)
        assert [search() for _ in range(3)] == [401] * 3

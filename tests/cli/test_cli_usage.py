"""`memvault usage` and `memvault limits`, on a data folder (in-process) and with `--url` on a running
server (the real server, the CLI as a separate process): limits set by one are what the other reads, a
store and a search show up in the usage, bad input fails with one line and changes nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
from cli_support import Shell, memvault, user_environment

from local_http import memvault_serve

ADMIN = "usage-admin-token-" + "0123456789abcdef" * 2
DEADLINE_SECONDS = 30.0


def test_limits_and_usage_in_a_data_folder(shell: Shell, tmp_path: Path) -> None:
    folder = ["--data-dir", str(tmp_path)]
    shell("keys", "create", *folder)
    key_id = shell("keys", "list", *folder).out.split("\t")[0]
    made = shell("limits", key_id, "--requests-per-minute", "7", "--json", *folder)
    assert made.code == 0, made.err
    assert json.loads(made.out)["requests_per_minute"] == 7
    shown = shell("limits", key_id, *folder)
    assert "requests_per_minute\t7" in shown.out and "provider_tokens_per_day\tnone" in shown.out
    refused = shell("limits", key_id, "--requests-per-minute", "0", *folder)
    assert refused.code != 0 and "requests_per_minute" in refused.err
    assert "requests_per_minute\t7" in shell("limits", key_id, *folder).out
    assert shell("limits", key_id, "--clear", *folder).code == 0
    assert "requests_per_minute\tnone" in shell("limits", key_id, *folder).out
    bad = shell("usage", "--from", "2026-02-30", *folder)
    assert bad.code != 0 and "YYYY-MM-DD" in bad.err
    empty = shell("usage", "--json", *folder)
    assert json.loads(empty.out)["rows"] == []


def test_usage_and_limits_over_url(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = user_environment(MEMVAULT_DATA_DIR=str(tmp_path / "server"), MEMVAULT_ADMIN_TOKEN=ADMIN)
    with memvault_serve(env) as url:
        remote = user_environment(MEMVAULT_ADMIN_TOKEN=ADMIN)
        made = memvault("keys", "create", "--url", url, cwd=work, env=remote)
        key = made.out.strip()
        key_id = json.loads(memvault("keys", "list", "--url", url, "--json", cwd=work, env=remote).out)[0]["id"]
        headers = {"Authorization": f"Bearer {key}"}
        httpx.post(f"{url}/v1/memory", json={"messages": [{"role": "user", "content": "Tea, no sugar."}]},
                   headers=headers).raise_for_status()
        httpx.post(f"{url}/v1/memory/search", json={"query": "tea"}, headers=headers).raise_for_status()
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            ran = memvault("usage", "--url", url, "--group-by", "key", "--json", cwd=work, env=remote)
            assert ran.code == 0, ran.err
            rows = json.loads(ran.out)["rows"]
            if rows and rows[0]["searches"] == 1 and rows[0]["messages_stored"] == 1:
                break
            assert time.monotonic() < deadline, "the store and the search were never accounted"
            time.sleep(0.1)
        assert rows[0]["key_id"] == key_id
        table = memvault("usage", "--url", url, "--group-by", "key", cwd=work, env=remote)
        assert table.out.splitlines()[1].startswith(key_id + "\t")
        set_remote = memvault("limits", key_id, "--url", url, "--memory-tokens-per-day", "100", cwd=work, env=remote)
        assert set_remote.code == 0, set_remote.err
        assert "memory_tokens_per_day\t100" in set_remote.out
        limited = httpx.get(f"{url}/v1/admin/keys/{key_id}/limits", headers={"Authorization": f"Bearer {ADMIN}"})
        assert limited.json()["memory_tokens_per_day"] == 100

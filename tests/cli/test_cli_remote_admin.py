"""`memvault keys … --url` and `memvault brain-token … --url` manage a running memvault over its admin
surface, with the admin token from the environment, exactly as they manage a data folder: the real
server (`memvault serve`) on 127.0.0.1, the CLI as a separate process in a folder with no data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from cli_support import Ran, assert_fails, memvault, user_environment

from local_http import memvault_serve

ADMIN = "remote-admin-token-" + "0123456789abcdef" * 2


@contextmanager
def served(data: Path, **env: str) -> Iterator[str]:
    with memvault_serve(user_environment(MEMVAULT_DATA_DIR=str(data), **env)) as url:
        yield url


def remote(work: Path, *args: str, token: str | None = ADMIN) -> Ran:
    env = user_environment(**({"MEMVAULT_ADMIN_TOKEN": token} if token is not None else {}))
    return memvault(*args, cwd=work, env=env)


def test_keys_and_credentials_are_managed_on_a_running_server_with_the_admin_token(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    with served(tmp_path / "server", MEMVAULT_ADMIN_TOKEN=ADMIN) as url:
        made = remote(work, "keys", "create", "--url", url, "--label", "telegram-bot")
        assert made.code == 0, made.err
        key = made.out.strip()
        assert key.startswith("mk_") and f"memvault at {url}" in made.err and "created key key_" in made.err
        stored = httpx.post(f"{url}/v1/memory", json={"messages": [{"role": "user", "content": "Tea, no sugar."}]},
                            headers={"Authorization": f"Bearer {key}"})
        assert stored.status_code == 200, stored.text
        listed = json.loads(remote(work, "keys", "list", "--url", url, "--json").out)
        assert [(k["label"], k["state"]) for k in listed] == [("telegram-bot", "active")]
        assert listed[0]["last_used_at"] is not None
        assert remote(work, "keys", "revoke", "--url", url, listed[0]["id"]).code == 0
        refused = httpx.post(f"{url}/v1/memory/search", json={"query": "tea"}, headers={"Authorization": f"Bearer {key}"})
        assert refused.status_code == 401
        assert_fails(remote(work, "keys", "revoke", "--url", url, listed[0]["id"]), 2, f"no active key {listed[0]['id']}")

        token = remote(work, "brain-token", "create", "--url", url, "--scopes", "family", "--writer", "--name", "bot")
        assert token.code == 0 and token.out.strip().startswith("bt_"), token.err
        lines = remote(work, "brain-token", "list", "--url", url).out.splitlines()
        assert [line.split("\t")[1:] for line in lines] == [["active", "bot", "writer", "family"]]
        assert remote(work, "brain-token", "revoke", "--url", url, lines[0].split("\t")[0]).code == 0
        searched = httpx.post(f"{url}/v1/brain/facts/search", json={"query": "tea"},
                              headers={"Authorization": f"Bearer {token.out.strip()}"})
        assert searched.status_code == 401
    assert not (work / ".memvault").exists()  # nothing was made where the CLI ran


def test_remote_refusals_are_one_line_each(tmp_path: Path) -> None:
    work = tmp_path / "elsewhere"
    work.mkdir()
    with served(tmp_path / "server", MEMVAULT_ADMIN_TOKEN=ADMIN) as url:
        assert_fails(remote(work, "keys", "create", "--url", url, token=None), 2, "MEMVAULT_ADMIN_TOKEN")
        assert_fails(remote(work, "keys", "list", "--url", url, token=ADMIN[::-1]), 2, "the admin token is required")
        assert_fails(remote(work, "keys", "list", "--url", url, "--data-dir", str(work)), 2, "give one")
        assert_fails(remote(work, "brain-token", "create", "--url", url, "--scopes", "family,nope"), 2,
                     "scope must be one of")
        assert json.loads(remote(work, "keys", "list", "--url", url, "--json").out) == []
    with served(tmp_path / "closed") as url:
        assert_fails(remote(work, "keys", "list", "--url", url), 2, "no such route")
    assert_fails(remote(work, "keys", "list", "--url", "memvault.example"), 2, "http(s) address")

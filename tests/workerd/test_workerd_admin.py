"""The admin surface in real workerd: memory keys and brain credentials created, listed and revoked
over HTTP with the Worker's `MEMVAULT_ADMIN_TOKEN` secret, stored hashed in local D1 with the
event log beside them, and the CLI's `--url` managing the Worker as it manages a data folder."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tier_stack import MainStack
from workers_dev import LOCAL_D1

MEMVAULT = Path(sys.executable).with_name("memvault")


def d1_rows(stack: MainStack, sql: str) -> list[dict[str, object]]:
    """The rows a query reads in memvault's local D1, from the SQLite file wrangler keeps it in (the
    file `wrangler d1 execute --local` reads, without its 3 s of starting Node and workerd)."""
    folder = stack.project / LOCAL_D1 / "miniflare-D1DatabaseObject"
    [database] = [path for path in folder.glob("*.sqlite") if path.name != "metadata.sqlite"]
    with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(row) for row in connection.execute(sql)]


def test_a_key_made_by_the_admin_works_is_listed_and_is_refused_once_revoked(stack: MainStack) -> None:
    admin = stack.secrets.admin_token
    assert stack.api("GET", "/v1/admin/keys").status_code == 401
    assert stack.api("GET", "/v1/admin/keys", admin[:-1] + "x").status_code == 401
    made = stack.api("POST", "/v1/admin/keys", admin, json={"label": "made over http"})
    assert made.status_code == 200, made.text
    key, key_id = made.json()["key"], made.json()["id"]
    stored = stack.api("POST", "/v1/memory", key, json={"messages": [{"role": "user", "content": "My boat is red."}]})
    assert stored.status_code == 200, stored.text
    listed = {k["id"]: k for k in stack.api("GET", "/v1/admin/keys", admin).json()["keys"]}
    assert listed[key_id]["state"] == "active" and listed[key_id]["last_used_at"] is not None
    assert key not in json.dumps(listed)
    [row] = d1_rows(stack, f"SELECT key_hash, label FROM memory_keys WHERE id = '{key_id}'")
    assert row["label"] == "made over http" and key not in json.dumps(row)
    assert stack.api("DELETE", f"/v1/admin/keys/{key_id}", admin).status_code == 200
    refused = stack.api("POST", "/v1/memory/search", key, json={"query": "boat"})
    assert refused.status_code == 401, refused.text
    actions = d1_rows(stack, f"SELECT action, actor FROM event_log WHERE detail LIKE '%{key_id}%' ORDER BY seq")
    assert actions == [{"action": "key.create", "actor": "admin-token"}, {"action": "key.revoke", "actor": "admin-token"}]


def test_a_credential_made_by_the_admin_reads_its_scope_until_revoked(stack: MainStack) -> None:
    admin = stack.secrets.admin_token
    made = stack.api("POST", "/v1/admin/credentials", admin, json={"name": "tier", "scopes": ["family"], "writer": True})
    assert made.status_code == 200, made.text
    token, credential_id = made.json()["token"], made.json()["id"]
    wrote = stack.api("POST", "/v1/brain/facts", token, json={"fact": "The admin tier fact 7731.", "scope": "family",
                                                             "source": "workerd-admin"})
    assert wrote.status_code == 200, wrote.text
    listed = {c["id"]: c for c in stack.api("GET", "/v1/admin/credentials", admin).json()["credentials"]}
    assert listed[credential_id]["scopes"] == ["family"] and listed[credential_id]["writer"] is True
    assert stack.api("DELETE", f"/v1/admin/credentials/{credential_id}", admin).status_code == 200
    assert stack.api("POST", "/v1/brain/facts/search", token, json={"query": "7731"}).status_code == 401


def test_the_cli_manages_the_worker_with_url_and_the_admin_token(stack: MainStack, tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")},
           "MEMVAULT_ADMIN_TOKEN": stack.secrets.admin_token}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(MEMVAULT), *args, "--url", stack.memvault.url], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    created = cli("keys", "create", "--label", "telegram-bot")
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert stack.api("POST", "/v1/memory", key, json={"messages": [{"role": "user", "content": "hi"}]}).status_code == 200
    listed = json.loads(cli("keys", "list", "--json").stdout)
    [mine] = [k for k in listed if k["label"] == "telegram-bot"]
    assert cli("keys", "revoke", mine["id"]).returncode == 0
    assert stack.api("POST", "/v1/memory/search", key, json={"query": "hi"}).status_code == 401
    token = cli("brain-token", "create", "--scopes", "family", "--name", "cli-bot")
    assert token.returncode == 0 and token.stdout.strip().startswith("bt_"), token.stderr
    assert not (tmp_path / ".memvault").exists()

"""A brain credential made with `memvault brain-token create` beside a running server: every
surface of that server (the brain routes, the portal's sign-in, `/mcp`) accepts it at once, with no
restart and nothing in the server's environment, and refuses it the moment `brain-token revoke`
returns. The same token opens nothing as a memory key."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
from mcp_support import answer, create_key, http_session, local_server, mcp_environment, refusal
from test_local_server import MEMVAULT


def brain_token_cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMVAULT), "brain-token", *args], env=mcp_environment(data_dir), capture_output=True,
                          text=True, timeout=120)


async def test_a_token_made_and_revoked_beside_the_server_counts_at_once_everywhere(tmp_path: Path) -> None:
    key = await create_key(tmp_path)
    with local_server(tmp_path) as mcp_url:
        base = mcp_url.removesuffix("/mcp")
        made = brain_token_cli(tmp_path, "create", "--scopes", "family", "--writer", "--name", "kitchen")
        assert made.returncode == 0, made.stderr
        token = made.stdout.splitlines()[-1]
        assert made.stdout == token + "\n" and "shown once" in made.stderr
        bearer = {"Authorization": f"Bearer {token}"}

        written = httpx.post(f"{base}/memory/write", headers=bearer,
                             json={"content": "The flour bin is on the top shelf.", "scope": "family", "source": "kitchen"})
        assert written.status_code == 200, written.text
        assert httpx.get(f"{base}/portal/me", headers=bearer).json() == {
            "kind": "brain", "name": "kitchen", "scopes": ["family"], "writer": True}
        walled = httpx.post(f"{base}/memory/write", headers=bearer,
                            json={"content": "Invoice 88 is paid.", "scope": "business", "source": "kitchen"})
        assert walled.status_code == 403, walled.text
        assert httpx.post(f"{base}/v1/memory/search", headers=bearer, json={"query": "flour"}).status_code == 401

        async with http_session(mcp_url, {"X-Memory-Key": key, **bearer}) as session:
            found = answer(await session.call_tool("brain_search", {"q": "flour bin"}))
            assert [r["id"] for r in found["results"]] == written.json()["ids"]

            (listed,) = brain_token_cli(tmp_path, "list").stdout.splitlines()
            key_id, state, name, role, scopes = listed.split("\t")
            assert (state, name, role, scopes) == ("active", "kitchen", "writer", "family") and token not in listed
            revoked = brain_token_cli(tmp_path, "revoke", key_id)
            assert revoked.returncode == 0 and revoked.stdout == "" and key_id in revoked.stderr

            assert "unknown brain credential" in refusal(await session.call_tool("brain_search", {"q": "flour bin"}))
        assert httpx.get(f"{base}/recall", headers=bearer).status_code == 401
        assert httpx.get(f"{base}/portal/me", headers=bearer).status_code == 401
        assert "revoked" in brain_token_cli(tmp_path, "list").stdout
        again = brain_token_cli(tmp_path, "revoke", key_id)
        assert again.returncode == 2 and again.stderr.strip().splitlines()[-1] == f"error: no active brain credential {key_id}"

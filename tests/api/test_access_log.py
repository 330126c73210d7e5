"""The real server's logs hold no secret: `memvault serve` in a subprocess is sent a sample of the
secret corpus in paths and query strings (percent-escaped, as a client sends them) — as session
ids, message ids, search parameters and paths that match no route — and everything it printed,
its access log included, holds none of them, while each request was logged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
from test_local_server import MEMVAULT, environment, free_port, server

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from secret_corpus import SECRETS, gated, leaks, sample

# Texts of the sample that fit an id (printable, at most 200 characters).
CASES = [case for case in sample(gated(SECRETS)) if case.text.isprintable() and len(case.text) <= 200]


def test_the_access_log_and_every_log_line_hold_no_secret_of_the_sample(tmp_path: Path) -> None:
    env = environment(tmp_path)
    created = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "logs"], env=env, capture_output=True,
                             text=True, check=True)
    auth = {"Authorization": f"Bearer {created.stdout.strip()}"}
    printed = tmp_path / "printed.log"
    with printed.open("wb") as sink, server(tmp_path, free_port(), env, output=sink) as url, \
            httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
        for case in CASES:
            escaped = quote(case.text, safe="")
            assert client.get("/v1/memory", params={"session_id": case.text}, headers=auth).status_code == 422
            # Nothing is stored under such an id; one with "/" is a path the forget route may not match.
            assert client.delete(f"/v1/memory/{escaped}", headers=auth).status_code < 500
            assert client.get(f"/nothing/{escaped}", params={"token": case.text}).status_code == 404
            # A provider path is refused before it is forwarded (no memory key, or a space in it).
            assert client.get(f"/v1/nothing/{escaped}", params={"token": case.text}).status_code in (400, 401)
            assert client.get(f"/v1/memory?session_id={escaped}&limit=oops").status_code == 401
    log = printed.read_text(encoding="utf-8", errors="replace")
    assert log.count("/v1/memory?session_id=") >= 2 * len(CASES), log[-2000:]
    assert log.count("/nothing/") >= len(CASES)
    assert leaks(CASES, log) == []
    held = "\n".join(p.name + p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*.sqlite3*"))
    assert leaks(CASES, held) == []

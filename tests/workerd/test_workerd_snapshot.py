"""The deploy-time memory snapshot, reproduced: memvault prepared and started the way
`scripts/workers-dev` does it (no Workers AI or Vectorize, which have no local simulation), once
taking a snapshot at start as `versions upload` does (import-time randomness or I/O fails there),
then cold-started from that snapshot. The first run is also the tier's check that memvault serves
without AI and Vectorize: keyword search, and hybrid brain search saying what it lacked, and the
recipe of docs/workerd.md's "`wrangler dev` locally" with the README's first curl commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tier_session import STARTS, SnapshotRuns

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "workerd.md"
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT / "tests" / "docs"))
from doc_pages import blocks  # noqa: E402


def test_the_worker_takes_a_deploy_style_snapshot_and_serves_without_ai_and_vectorize(snapshot_runs: SnapshotRuns) -> None:
    run = snapshot_runs.run(save=True)
    snapshot = run.dev.log.parent / "snapshot" / "snapshot.bin"
    assert snapshot.is_file() and snapshot.stat().st_size > 10_000_000
    STARTS[run.dev.name]["snapshot_mb"] = snapshot.stat().st_size / 1e6

    stored = run.api("POST", "/v1/memory", run.memory_key, json={"messages": [{"role": "user", "content": "The boat is moored at pier 9."}]})
    assert stored.status_code == 200, stored.text
    found = run.api("POST", "/v1/memory/search", run.memory_key, json={"query": "where is the boat moored?"}).json()
    assert found["items"] and "pier 9" in found["items"][0]["text"]
    assert found["metrics"].get("embed_error")  # the query had no vector: the keyword channel answered

    written = run.api("POST", "/memory/write", run.family_writer,
                      json={"source": "notes", "scope": "family", "content": "The boat's name is Marigold."})
    assert written.status_code == 200, written.text
    hybrid = run.api("GET", "/memory/search", run.family_writer, params={"q": "boat name Marigold", "mode": "hybrid"}).json()
    assert [r["id"] for r in hybrid["results"]] == written.json()["ids"] and hybrid["degraded"] == ["vector"]


def test_the_first_curl_of_the_local_recipe_works_as_written(snapshot_runs: SnapshotRuns) -> None:
    run = snapshot_runs.run(save=True)
    assert re.search(r"```sh\nexport MEMVAULT_KEY=\$\(scripts/workers-dev key ", DOC.read_text()), (
        "docs/workerd.md lost its first-key block")
    # The recipe's key, then the README's first memory as written.
    (block,) = [b for b in blocks(README) if b.section == "A first memory"]
    commands = [line for line in block.text.splitlines() if not line.startswith("export MEMVAULT_KEY=")]
    script = "set -e\n" + "\n".join(commands).replace("127.0.0.1:8787", run.dev.url.removeprefix("http://"))
    done = subprocess.run(["bash", "-c", script], env={"MEMVAULT_KEY": run.memory_key, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"messages_accepted":1' in done.stdout and "Biscuit" in done.stdout.split('"messages_accepted"')[1]


def test_a_cold_start_from_the_snapshot_serves_a_write_and_a_search(snapshot_runs: SnapshotRuns) -> None:
    run = snapshot_runs.run(save=False)
    stored = run.api("POST", "/v1/memory", run.memory_key, json={"messages": [{"role": "user", "content": "The kayak is blue."}]})
    assert stored.status_code == 200, stored.text
    found = run.api("POST", "/v1/memory/search", run.memory_key, json={"query": "what colour is the kayak?"}).json()
    assert found["items"] and found["items"][0]["text"] == "The kayak is blue."
    # What the first run stored is still there: the state lives beside the Worker, not in the snapshot.
    earlier = run.api("POST", "/v1/memory/search", run.memory_key, json={"query": "boat pier"}).json()
    assert any("pier 9" in item["text"] for item in earlier["items"])


ENTROPY_AT_IMPORT = '''import secrets

from workers import Response, WorkerEntrypoint

SESSION = secrets.token_hex(8)


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return Response(SESSION)
'''


def test_randomness_at_import_fails_the_snapshot_as_it_fails_a_deploy(snapshot_runs: SnapshotRuns, tmp_path: Path) -> None:
    """The guard can fail: a Worker that draws randomness while it is imported cannot start with a
    deploy-style snapshot, with the runtime's own message."""
    config = tmp_path / "wrangler.toml"
    config.write_text('name = "entropy"\nmain = "entry.py"\ncompatibility_date = "2026-10-30"\n'
                      'compatibility_flags = ["python_workers"]\n')
    (tmp_path / "entry.py").write_text(ENTROPY_AT_IMPORT)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "entropy"\nversion = "0"\ndependencies = []\n')
    failed = snapshot_runs.start_once(config)
    assert failed.returncode != 0
    assert "Randomness is not allowed while a Worker is starting" in failed.stdout + failed.stderr

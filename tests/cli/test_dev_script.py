"""`scripts/dev ARGS` is `memvault serve ARGS` over the .venv scripts/test prepared, which it
reuses as it is; and a server started on one data folder takes the keys made for that folder."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx
import pytest
from cli_support import MEMVAULT, ROOT, created_key, memvault, user_environment

from local_http import wait_healthy

STAMP = ROOT / ".venv" / ".memvault-installed"


def prepared_venv() -> str:
    """The stamp of a .venv that scripts/test prepared for this pyproject.toml (else the test is skipped: scripts/dev would install)."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + (ROOT / "scripts" / "_venv.sh").read_bytes()).hexdigest()
    stamp = STAMP.read_text() if STAMP.is_file() else ""
    lines = stamp.splitlines()
    if len(lines) < 2 or lines[0] != digest or "dev" not in lines[1].split():
        pytest.skip("the .venv was not prepared by scripts/test for this pyproject.toml (run scripts/test)")
    return stamp


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(command: list[str], cwd: Path, env: dict[str, str], url: str) -> Iterator[IO[bytes]]:
    """The server until the block ends; yields the file its logs go to (a pipe nobody reads
    would stop it once it filled)."""
    with tempfile.TemporaryFile() as logs:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=logs)
        try:
            wait_healthy(url, process, 120, logs)
            yield logs
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


def test_dev_passes_its_arguments_to_serve_and_reuses_the_prepared_venv(tmp_path: Path) -> None:
    stamp = prepared_venv()
    before = STAMP.stat().st_mtime_ns
    helped = subprocess.run([str(ROOT / "scripts" / "dev"), "--help"], cwd=tmp_path, env=user_environment(),
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "Usage: memvault serve" in helped.stdout and "--port" in helped.stdout
    assert "pip" not in helped.stderr
    data = tmp_path / "data"
    key = created_key(data, tmp_path)
    port = free_port()
    env = user_environment(MEMVAULT_DATA_DIR=str(data))
    with running([str(ROOT / "scripts" / "dev"), "--port", str(port)], tmp_path, env, f"http://127.0.0.1:{port}"):
        stored = httpx.post(f"http://127.0.0.1:{port}/v1/memory", headers={"Authorization": f"Bearer {key}"},
                            json={"messages": [{"role": "user", "content": "The spare key is under the blue pot."}]})
        assert stored.status_code == 200, stored.text
    assert STAMP.read_text() == stamp and STAMP.stat().st_mtime_ns == before


def test_serve_takes_the_keys_of_the_folder_it_is_given_wherever_it_starts(tmp_path: Path) -> None:
    data = tmp_path / "project" / ".memvault"
    key = created_key(data, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [str(MEMVAULT), "serve", "--port", str(port), "--data-dir", str(data)]
    with running(command, elsewhere, user_environment(), url) as logs:
        answer = httpx.post(f"{url}/v1/memory/search", headers={"Authorization": f"Bearer {key}"}, json={"query": "pot"})
        assert answer.status_code == 200, answer.text
        logs.seek(0)
        said = logs.read().decode()
    assert f"data folder: {data}" in said
    assert not (elsewhere / ".memvault").exists()
    ran = memvault("mcp", "--key", key, cwd=elsewhere)
    assert ran.code == 2 and "no memvault data in" in ran.errors[0]


def test_every_script_on_the_venv_prepares_it_before_running_it() -> None:
    """A script that sources _venv.sh runs on .venv: on a fresh clone only ensure_venv makes it."""
    sourcing = [path for path in sorted((ROOT / "scripts").iterdir())
                if path.is_file() and path.name != "_venv.sh" and "_venv.sh" in path.read_text(errors="replace")]
    assert {path.name for path in sourcing} >= {"dev", "test", "workers-dev"}
    for path in sourcing:
        lines = path.read_text().splitlines()
        prepared = next((i for i, line in enumerate(lines) if line.split()[:1] == ["ensure_venv"]), None)
        used = next((i for i, line in enumerate(lines) if ".venv/" in line and not line.lstrip().startswith("#")), None)
        assert prepared is not None, f"scripts/{path.name} sources _venv.sh but never calls ensure_venv"
        assert used is None or prepared < used, f"scripts/{path.name} uses .venv before ensure_venv made it"

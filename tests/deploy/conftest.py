"""Fixtures for deploy tests: a stand-in for Cloudflare (a fake `npx wrangler` first on PATH, behind
the real pywrangler, and a /health server on 127.0.0.1 sharing its state), a copy of the project
the rail runs in, and the bundle's size, printed at the end of the run."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from deploy_fakes import OVERRIDE, FakeCloudflare

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_http import local_http_server
from run_summary import summary_hooks

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture
def cloudflare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCloudflare]:
    fake = FakeCloudflare(state_file=tmp_path / "cloudflare.json")
    fake.reset(secrets=["MEMVAULT_BRAIN_CREDENTIALS"])

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/health":
                self.send_error(404)
                return
            status, body = fake.answer(self.headers.get(OVERRIDE))
            payload = json_bytes(body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(f"#!{sys.executable}\n" + (HERE / "fake_npx.py").read_text())
    npx.chmod(npx.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_CLOUDFLARE_STATE", str(fake.state_file))
    assert shutil.which("npx") == str(npx)
    with local_http_server(Handler) as origin:
        fake.base_url = origin
        yield fake


def json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


def mark_synced(project: Path) -> None:
    """What `pywrangler sync` leaves behind when it has vendored pyproject.toml's dependencies: a
    `.synced` marker naming the workers-py version, newer than pyproject.toml, in python_modules/
    and in .venv-workers/. pywrangler skips the sync when both are there."""
    for folder in ("python_modules", ".venv-workers"):
        (project / folder).mkdir(exist_ok=True)
        (project / folder / ".synced").write_text(version("workers-py"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The files the rail reads, in the repository's layout, synced as pywrangler sees it."""
    copy = tmp_path / "project"
    (copy / "scripts").mkdir(parents=True)
    for name in ("safe_deploy.py", "build_worker.py"):
        shutil.copy2(ROOT / "scripts" / name, copy / "scripts" / name)
    for name in ("wrangler.toml", "pyproject.toml"):
        shutil.copy2(ROOT / name, copy / name)
    mark_synced(copy)
    return copy


def summary_lines() -> list[str]:
    module = sys.modules.get("test_bundle")
    measured = getattr(module, "MEASURED", {})
    if "gzip_kib" not in measured:
        return []
    share = ", ".join(f"{share:.0%} of the {plan} plan's {limit // 1024} MB"
                      for plan, limit in module.PLAN_LIMITS_KIB.items() for share in [measured["gzip_kib"] / limit])
    without = f"; without {', '.join(measured['left_out'])} (PyPI has no Pyodide wheel)" if measured["left_out"] else ""
    return [f"worker bundle: {measured['gzip_kib']:.0f} KiB compressed ({measured['upload_kib']:.0f} KiB "
            f"uncompressed): {share}{without}"]


pytest_sessionfinish, pytest_terminal_summary = summary_hooks(summary_lines)

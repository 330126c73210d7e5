"""Fixtures for deploy tests: a fake `pywrangler` first on PATH (and a `wrangler` that only records
that something went around pywrangler) and a local /health server; the bundle's size, printed at
the end of the run."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from deploy_fakes import OVERRIDE, FakeWrangler, HealthServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from local_http import local_http_server

HERE = Path(__file__).resolve().parent


@pytest.fixture
def health_server() -> Iterator[HealthServer]:
    state = HealthServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site, _, rest = self.path.strip("/").partition("/")
            override = self.headers.get(OVERRIDE)
            if site == "live" and override:
                state.overrides_seen.append(override)
                site = "candidate"
            if rest != "health" or site not in state.sites:
                self.send_error(404)
                return
            time.sleep(state.hang_seconds.get(site, 0.0))
            status, body = state.sites[site]
            payload = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the timeout test): nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with local_http_server(Handler) as origin:
        state.base_url = origin
        yield state


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_wrangler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeWrangler:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pywrangler = _executable(bin_dir / "pywrangler", f"#!{sys.executable}\n" + (HERE / "fake_pywrangler.py").read_text())
    bare_log = tmp_path / "bare-wrangler-calls.txt"
    bare = _executable(bin_dir / "wrangler", f'#!/bin/sh\necho "$*" >> "{bare_log}"\nexit 9\n')
    log = tmp_path / "pywrangler-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_WRANGLER_LOG", str(log))
    assert shutil.which("pywrangler") == str(pywrangler) and shutil.which("wrangler") == str(bare)
    return FakeWrangler(log=log, bare_log=bare_log)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = sys.modules.get("test_bundle")
    measured = getattr(module, "MEASURED", {})
    if "gzip_kib" not in measured:
        return
    share = ", ".join(f"{share:.0%} of the {plan} plan's {limit // 1024} MB"
                      for plan, limit in module.PLAN_LIMITS_KIB.items() for share in [measured["gzip_kib"] / limit])
    without = f"; without {', '.join(measured['left_out'])} (PyPI has no Pyodide wheel)" if measured["left_out"] else ""
    terminalreporter.write_line(f"worker bundle: {measured['gzip_kib']:.0f} KiB compressed ({measured['upload_kib']:.0f} KiB "
                                f"uncompressed): {share}{without}")

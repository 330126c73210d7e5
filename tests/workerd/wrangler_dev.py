"""One `wrangler dev` process of the workerd tier: started in its own process group on a free
127.0.0.1 port, its output kept in a log file, ready once its Worker answers, stopped (the whole
group) however the test ends."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

T = TypeVar("T")
READY_SECONDS = 240.0
FIRST_REQUEST_SECONDS = 180.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(what: str, check: Callable[[], T | None], seconds: float = 60.0, every: float = 0.1) -> T:
    """Poll ``check`` until it returns something true (a non-empty list, a dict, True); fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {seconds:.0f} s waiting for {what}")
        time.sleep(every)


class WranglerDev:
    def __init__(self, name: str, command: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._command = [*command, "--ip", "127.0.0.1", "--port", str(self.port), "--inspector-port", str(free_port()),
                         "--show-interactive-dev-session=false"]
        self._cwd = cwd
        self._env = env
        self.log = log
        self._process: subprocess.Popen[bytes] | None = None
        self.timing: dict[str, float] = {}

    def start(self) -> WranglerDev:
        self._started = time.perf_counter()
        with self.log.open("wb") as out:
            self._process = subprocess.Popen(self._command, cwd=self._cwd, env=self._env, stdout=out,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def _alive_or_fail(self) -> None:
        if self._process is not None and self._process.poll() is not None:
            raise AssertionError(f"{self.name}: wrangler dev exited ({self._process.returncode}):\n{self.output()[-6000:]}")

    def wait_ready(self, path: str = "/health") -> httpx.Response:
        """Wait until wrangler says it listens (workerd has started the Worker by then: Pyodide and
        the imports, or a snapshot restore), then time the first request and a second one."""

        def listening() -> bool:
            self._alive_or_fail()
            return f"Ready on {self.url}" in self.output()

        wait_for(f"{self.name} to listen", listening, READY_SECONDS, every=0.2)
        self.timing["listening_s"] = time.perf_counter() - self._started
        started = time.perf_counter()
        try:
            first = httpx.get(self.url + path, timeout=FIRST_REQUEST_SECONDS)
        except httpx.HTTPError as exc:
            self._alive_or_fail()
            raise AssertionError(f"{self.name}: first request failed ({exc!r}):\n{self.output()[-6000:]}") from exc
        self.timing["first_request_s"] = time.perf_counter() - started
        started = time.perf_counter()
        httpx.get(self.url + path, timeout=60)
        self.timing["second_request_s"] = time.perf_counter() - started
        return first

    def json_lines(self, event: str) -> list[dict[str, Any]]:
        """Every JSON object the Worker logged with ``"event": event``."""
        found = []
        for line in self.output().splitlines():
            start = line.find("{")
            if start < 0 or f'"{event}"' not in line:
                continue
            try:
                value = json.loads(line[start:])
            except ValueError:
                continue
            if isinstance(value, dict) and value.get("event") == event:
                found.append(value)
        return found

    def stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self._process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self._process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        # workerd and esbuild are children in the same group: make sure none outlives its parent.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)

"""Servers on 127.0.0.1 for tests: a plain HTTP server for something to answer over the network (a
deployment's /health, an Access team's certs URL), served from a thread; and memvault itself as a
user starts it (`memvault serve`). Each is stopped afterwards."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO

import httpx


@contextmanager
def local_http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free port; yields the server's origin, ``http://127.0.0.1:PORT``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def memvault_serve(env: Mapping[str, str], output: IO[bytes] | None = None, port: int | None = None) -> Iterator[str]:
    """`memvault serve` as a user runs it, on ``port`` (a free one if None) with ``env``; yields its
    origin once its /health answers, and stops it (SIGTERM) afterwards. ``output`` takes all it
    prints, if given; otherwise a file does, never a pipe nobody reads (a server that logs more
    than a pipe holds would stop at its next log line)."""
    command = [str(Path(sys.executable).with_name("memvault")), "serve", "--host", "127.0.0.1",
               "--port", str(port or free_port())]
    with ExitStack() as stack:
        logs = output or stack.enter_context(tempfile.TemporaryFile())
        process = subprocess.Popen(command, env=dict(env), stdout=logs, stderr=logs)
        url = f"http://127.0.0.1:{command[-1]}"
        try:
            wait_healthy(url, process, 120, None if output else logs)
            yield url
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)


def wait_healthy(url: str, process: subprocess.Popen[bytes], seconds: float, logs: IO[bytes] | None) -> None:
    """Wait until ``url``'s /health answers 200; if ``process`` ends first or ``seconds`` pass, stop
    it and fail, with what it wrote to ``logs`` (a file) if given."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            printed = ""
            if logs is not None:
                logs.seek(0)
                printed = logs.read().decode(errors="replace")
            raise AssertionError(f"the server did not answer /health: {printed}")
        time.sleep(0.1)

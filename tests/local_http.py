"""Servers on 127.0.0.1 for tests: a plain HTTP server for something to answer over the network (a
deployment's /health, an Access team's certs URL), served from a thread; and memvault itself as a
user starts it (`memvault serve`). Each is stopped afterwards."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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
def memvault_serve(env: Mapping[str, str], output: IO[bytes] | None = None) -> Iterator[str]:
    """`memvault serve` as a user runs it, on a free port with ``env``; yields its origin once its
    /health answers, and stops it (SIGTERM) afterwards. ``output`` takes all it prints, if given."""
    command = [str(Path(sys.executable).with_name("memvault")), "serve", "--host", "127.0.0.1", "--port", str(free_port())]
    process = subprocess.Popen(command, env=dict(env), stdout=output or subprocess.DEVNULL,
                               stderr=output or subprocess.PIPE)
    url = f"http://127.0.0.1:{command[-1]}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"memvault serve did not start: {(process.communicate()[1] or b'').decode()}")
            time.sleep(0.1)
        yield url
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)

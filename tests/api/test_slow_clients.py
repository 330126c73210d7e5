"""`memvault serve` and callers that send their request body slowly, stop sending it, or leave
half-way: a body that stops arriving is answered 408 and its connection closed, so such callers
cannot hold every connection the server serves; a caller that leaves mid-body is logged as such,
not as a failure; nothing of either is stored, and the server answers the next caller."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path

import httpx
from test_local_server import MEMVAULT, environment, free_port, server

DEADLINE_SECONDS = 30.0
ROUTES = {"/v1/memory": "Authorization: Bearer ", "/v1/chat/completions": "X-Memory-Key: "}


def half_sent(url: str, path: str, key: str) -> socket.socket:
    """A connection that sent a request's headers and the first bytes of its body, and no more."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=DEADLINE_SECONDS)
    body = b'{"model": "m", "messages": [{"role": "user", "content": "half of this never arrives"}]}'
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n{ROUTES[path]}{key}\r\nContent-Type: application/json\r\n"
    sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body[:20])
    return sock


def wait_for_line(log: Path, text: str, count: int) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while log.read_text(errors="replace").count(text) < count:
        assert time.monotonic() < deadline, f"waited for {count} x {text!r}: {log.read_text()[-2000:]}"
        time.sleep(0.05)


def test_bodies_that_stop_or_are_left_half_way_store_nothing_and_log_no_failure(tmp_path: Path) -> None:
    env = {**environment(tmp_path), "MEMVAULT_IDLE_CONNECTION_SECONDS": "1"}
    key = subprocess.run([str(MEMVAULT), "keys", "create"], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    printed = tmp_path / "printed.log"
    with printed.open("wb") as sink, server(tmp_path, free_port(), env, output=sink) as url:
        stalled = [half_sent(url, path, key) for path in ROUTES]
        for sock in stalled:
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 408 ") and b'"code":"timeout"' in answer.replace(b" ", b"")
            assert sock.recv(1) == b""  # closed
            sock.close()
        for path in ROUTES:
            half_sent(url, path, key).close()
        wait_for_line(printed, "the client left before its request body was whole", len(ROUTES))
        page = httpx.get(f"{url}/v1/memory", headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert page.status_code == 200 and page.json()["items"] == []
    log = printed.read_text(errors="replace")
    assert "ERROR" not in log and "Exception in ASGI application" not in log, log[-2000:]


def test_a_body_trickled_a_byte_at_a_time_is_cut_off_without_a_credential(tmp_path: Path) -> None:
    """A byte every so often restarts no clock that matters: past the idle time, a body must come
    at a floor rate, or the caller (with no credential at all) could hold a connection for days."""
    env = {**environment(tmp_path), "MEMVAULT_IDLE_CONNECTION_SECONDS": "1"}
    with server(tmp_path, free_port(), env) as url:
        host, port = url.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)), timeout=DEADLINE_SECONDS)
        sock.sendall(b"POST /v1/memory HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100000\r\n\r\n{")
        answer = b""
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not answer and time.monotonic() < deadline:
            time.sleep(0.3)
            with contextlib.suppress(OSError):  # closed by the server: its answer is waiting to be read
                sock.sendall(b" ")
            sock.settimeout(0.05)
            try:
                answer = sock.recv(4096)
            except TimeoutError:
                continue
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert httpx.get(f"{url}/health", timeout=30).status_code == 200

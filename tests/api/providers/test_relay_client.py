"""The HTTP client the local server relays provider calls with (``build_local_deps(...).http``),
against a real upstream on loopback: what goes out is what the caller sent, what comes back is what
upstream answered, and nothing of one caller's call rides on another's."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import ServerThread

from memvault.core.errors import UpstreamUnavailable
from memvault.core.ports import HttpClient
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

Scope = dict[str, Any]


class Upstream:
    """Records each request's raw target and headers; answers by path."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, list[tuple[bytes, bytes]], bytes]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.seen.append((scope["raw_path"] + b"?" + scope["query_string"], scope["headers"], body))
        path = scope["path"]
        headers = [(b"content-type", b"application/json")]
        status, chunks = 200, [b'{"ok": true}']
        if path == "/cookie":
            headers.append((b"set-cookie", b"session=first-callers; Path=/"))
        elif path == "/moved":
            status, headers = 307, [*headers, (b"location", b"/elsewhere")]
        elif path == "/gzip":
            chunks = [gzip.compress(b'{"zipped": true}')]
            headers.append((b"content-encoding", b"gzip"))
        elif path == "/twice":
            headers += [(b"x-repeated", b"one"), (b"x-repeated", b"two")]
        elif path == "/cut":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [*headers, (b"content-length", b"1000")]})
            await send({"type": "http.response.body", "body": b'{"half":', "more_body": True})
            raise RuntimeError("upstream dies half-way")  # uvicorn drops the connection
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Upstream, str]]:
    app = Upstream()
    with ServerThread(app) as server:
        yield app, server.url


def relayed(tmp_path: Path, calls: Any) -> Any:
    async def run() -> Any:
        deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
        try:
            return await calls(deps.http)
        finally:
            await close_local_deps(deps)

    return asyncio.run(run())


async def whole(http: HttpClient, url: str, headers: list[tuple[str, str]] | None = None,
                body: bytes = b"") -> tuple[int, list[tuple[str, str]], bytes]:
    response = await http.send("POST" if body else "GET", url, headers or [], body)
    try:
        return response.status, response.headers, b"".join([chunk async for chunk in response.aiter_bytes()])
    finally:
        await response.aclose()


def test_a_cookie_upstream_sets_on_one_call_never_goes_out_on_the_next(
    tmp_path: Path, upstream: tuple[Upstream, str]
) -> None:
    app, url = upstream

    async def calls(http: HttpClient) -> None:
        await whole(http, f"{url}/cookie")
        await whole(http, f"{url}/next")

    relayed(tmp_path, calls)
    assert not any(name == b"cookie" for name, _ in app.seen[-1][1])


def test_the_target_headers_and_body_go_out_as_given(tmp_path: Path, upstream: tuple[Upstream, str]) -> None:
    app, url = upstream
    target = "/v1beta/models/a%2Fb%3Ac:generateContent?alt=sse&q=x%20y%2B&key=k%3D"
    sent = [("x-repeated", "one"), ("X-Repeated", "two"), ("accept-encoding", "identity")]

    async def calls(http: HttpClient) -> Any:
        return await whole(http, url + target, sent, b'{"a": 1}')

    status, _, _ = relayed(tmp_path, calls)
    raw_target, headers, body = app.seen[-1]
    assert status == 200 and body == b'{"a": 1}'
    assert raw_target.decode() == target
    assert [value for name, value in headers if name == b"x-repeated"] == [b"one", b"two"]
    # Nothing the caller did not send about its body: no content type of the client's own.
    assert not any(name == b"content-type" for name, _ in headers)
    assert (b"content-length", b"8") in headers


def test_what_comes_back_is_upstreams_answer(tmp_path: Path, upstream: tuple[Upstream, str]) -> None:
    _, url = upstream

    async def calls(http: HttpClient) -> list[Any]:
        return [await whole(http, f"{url}/{path}") for path in ("moved", "gzip", "twice")]

    moved, zipped, twice = relayed(tmp_path, calls)
    assert moved[0] == 307 and ("location", "/elsewhere") in moved[1]  # not followed
    assert zipped[2] == b'{"zipped": true}' and ("content-encoding", "gzip") in zipped[1]
    assert [value for name, value in twice[1] if name == "x-repeated"] == ["one", "two"]


def test_an_upstream_that_fails_is_unavailable_and_the_error_names_no_url(
    tmp_path: Path, upstream: tuple[Upstream, str]
) -> None:
    _, url = upstream
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def calls(http: HttpClient) -> list[str]:
        errors = []
        with pytest.raises(UpstreamUnavailable) as refused:
            await whole(http, f"http://127.0.0.1:{port}/v1/x?key=AIzaSecretQuery")
        errors.append(str(refused.value))
        with pytest.raises(UpstreamUnavailable) as cut:
            await whole(http, f"{url}/cut?key=AIzaSecretQuery")
        errors.append(str(cut.value))
        return errors

    refused, cut = relayed(tmp_path, calls)
    assert "unreachable" in refused and "interrupted" in cut
    assert not any("AIza" in text or "127.0.0.1" in text for text in (refused, cut))


class Gathering:
    """Holds every answer until ``expected`` requests are in, so they are all in flight at once."""

    def __init__(self, expected: int) -> None:
        self.expected, self.arrived = expected, 0
        self.all_in: asyncio.Event | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        self.all_in = self.all_in or asyncio.Event()
        while (await receive()).get("more_body"):
            pass
        self.arrived += 1
        if self.arrived >= self.expected:
            self.all_in.set()
        await self.all_in.wait()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts this process's descriptors in /proc")
def test_bursts_to_several_providers_leave_a_bounded_number_of_idle_connections(tmp_path: Path) -> None:
    from memvault.adapters.local.relay_client import IDLE_CONNECTIONS

    burst = IDLE_CONNECTIONS * 2

    def open_fds() -> int:
        return len(list(Path("/proc/self/fd").iterdir()))

    with ServerThread(Gathering(burst)) as first, ServerThread(Gathering(burst)) as second:
        async def calls(http: HttpClient) -> int:
            before = open_fds()
            for url in (first.url, second.url):
                answers = await asyncio.gather(*(whole(http, f"{url}/v1/x") for _ in range(burst)))
                assert [status for status, _, _ in answers] == [200] * burst
            # The upstream servers' ends are in this process too (one per connection kept), and a
            # closed connection's sockets go once both loops have run: wait for it, within a bound
            # below the 5 s after which the upstream servers close idle connections themselves.
            deadline = time.monotonic() + 2.0
            while open_fds() - before > 2 * IDLE_CONNECTIONS + 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            return open_fds() - before

        assert relayed(tmp_path, calls) <= 2 * IDLE_CONNECTIONS + 4


class ClosesWhenTold:
    """A keep-alive HTTP/1.1 upstream on raw sockets that closes a connection after its answer when
    told to, as a provider closes connections idle too long, and counts the connections it accepted."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.close_idle, self.closed = threading.Event(), threading.Event()
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with connection:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}")
                self.close_idle.wait(timeout=60)
            self.closed.set()


def test_a_connection_the_provider_closed_while_the_server_was_busy_is_not_used(tmp_path: Path) -> None:
    """The provider closes an idle connection while the server's event loop is busy (its callback
    for the close has not run yet): the next call goes out on a new connection, not into an error."""
    upstream = ClosesWhenTold()

    async def calls(http: HttpClient) -> list[int]:
        first = await whole(http, f"{upstream.url}/v1/x")
        upstream.close_idle.set()
        assert upstream.closed.wait(timeout=30)  # blocks the loop, as a busy server's does
        second = await whole(http, f"{upstream.url}/v1/x", [("content-type", "application/json")], b"{}")
        return [first[0], second[0]]

    try:
        assert relayed(tmp_path, calls) == [200, 200]
        assert upstream.accepted == 2
    finally:
        upstream.listener.close()

"""The bounds `memvault serve` runs uvicorn with, each where it bites: out of file descriptors at
accept, idle connections, request bodies that stop arriving, request heads past their limit, and more
connections than it serves at once."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from memvault.cli.server_limits import fd_budget, logging_config

# uvicorn with the server's protocol and logging over a one-route app, under RLIMIT_NOFILE; the MCP
# SDK's rich logging handler installed first, as building the app does.
SERVER = """
import resource, sys
import uvicorn
from mcp.server.mcpserver.utilities.logging import configure_logging
from memvault.cli.server_limits import bounded_protocol, logging_config

async def app(scope, receive, send):
    if scope["type"] == "http":
        body = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        answer = str(len(body)).encode() if body else b"ok"  # a body's length, as proof it arrived whole
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(answer))]})
        await send({"type": "http.response.body", "body": answer})

configure_logging()
port, fd_limit, connections, idle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))
uvicorn.run(app, host="127.0.0.1", port=port, http=bounded_protocol(connections, idle), log_config=logging_config("info"))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def bounded_server(tmp_path: Path, fd_limit: int, connections: int, idle: float) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    script, log = tmp_path / "server.py", tmp_path / "server.log"
    script.write_text(SERVER)
    port = free_port()
    with log.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, str(script), str(port), str(fd_limit), str(connections), str(idle)],
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    url = f"http://127.0.0.1:{port}"
    try:
        assert answers(url, deadline=60), log.read_text()
        yield url, process, log
    finally:
        process.terminate()
        process.wait(timeout=30)


def answers(url: str, deadline: float) -> bool:
    """Whether ``url`` answers 200 within ``deadline`` seconds (asked again until then)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return True
        except httpx.HTTPError:
            time.sleep(0.1)
    return False


def idle_connections(stack: ExitStack, url: str, count: int) -> list[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    return [stack.enter_context(socket.create_connection((host, int(port)), timeout=10)) for _ in range(count)]


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return False


def test_out_of_descriptors_at_accept_the_server_logs_one_line_and_keeps_serving(tmp_path: Path) -> None:
    began = time.monotonic()
    with bounded_server(tmp_path, fd_limit=40, connections=10_000, idle=1.0) as (url, process, log), ExitStack() as stack:
        idle_connections(stack, url, 60)  # more than the process may open: accept fails with EMFILE
        end = time.monotonic() + 30
        while "out of system resource" not in log.read_text() and time.monotonic() < end:
            time.sleep(0.1)
        assert "out of system resource" in log.read_text()
        assert process.poll() is None
        # The idle connections are closed one second after they were taken; new callers get in.
        assert answers(url, deadline=30)
    lines = [line for line in log.read_text().splitlines() if "out of system resource" in line]
    assert lines and all("OSError: [Errno 24] Too many open files" in line for line in lines)
    # One line a second at most, not one for every connection waiting in the listen backlog.
    assert len(lines) <= time.monotonic() - began + 1, len(lines)
    assert "Traceback" not in log.read_text()


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_limit(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=100, idle=1.0) as (url, _, _), ExitStack() as stack:
        [silent] = idle_connections(stack, url, 1)
        started = time.monotonic()
        assert closed_by_server(silent)
        assert time.monotonic() - started < 9  # well before the socket's own 10 s timeout


def test_a_request_whose_body_stops_arriving_is_answered_408_and_closed(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=2, idle=1.0) as (url, _, log), ExitStack() as stack:
        stalled = idle_connections(stack, url, 2)  # every connection the server serves at once
        for sock in stalled:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + b"x" * 10)
        for sock in stalled:
            assert sock.recv(4096).startswith(b"HTTP/1.1 408 ")
            assert closed_by_server(sock)
        assert answers(url, deadline=30)  # the slots they held are free again
        assert "request body stopped arriving" in log.read_text()


def test_a_body_that_keeps_arriving_slowly_is_read_whole(tmp_path: Path) -> None:
    """Slowly, but above the floor rate: 32 KiB in pieces over 2.4 s (13 KiB a second)."""
    piece = 4096
    with bounded_server(tmp_path, fd_limit=256, connections=100, idle=1.0) as (url, _, _), ExitStack() as stack:
        [slow] = idle_connections(stack, url, 1)
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (8 * piece))
        for _ in range(8):  # 2.4 s in all, longer than the idle limit, never idle for as long
            time.sleep(0.3)
            slow.sendall(b"x" * piece)
        expected = b"\r\n\r\n%d" % (8 * piece)
        answer = b""
        while not answer.endswith(expected) and (more := slow.recv(4096)):
            answer += more
        assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(expected)


def test_a_body_that_trickles_below_the_floor_rate_is_answered_408(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=100, idle=1.0) as (url, _, _), ExitStack() as stack:
        [slow] = idle_connections(stack, url, 1)
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n")
        answer = b""
        for _ in range(8):  # a byte every 0.3 s: never idle, far below the floor once the idle time passed
            time.sleep(0.3)
            with contextlib.suppress(OSError):
                slow.sendall(b"x")
        while more := slow.recv(4096):
            answer += more
        assert answer.startswith(b"HTTP/1.1 408 "), answer


def test_past_its_connection_limit_a_new_caller_takes_the_place_of_an_idle_one(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=5, idle=3600.0) as (url, _, _), ExitStack() as stack:
        held = idle_connections(stack, url, 5)
        for _ in range(3):  # each keeps its connection open
            client = stack.enter_context(httpx.Client(base_url=url, timeout=10))
            assert client.get("/").status_code == 200
        assert [closed_by_server(sock) for sock in held[:3]] == [True] * 3  # those waiting longest made room


def test_a_caller_refused_as_busy_reads_its_503_even_while_it_is_still_sending(tmp_path: Path) -> None:
    # Closed at once, the refused connection's bytes still arriving would make the kernel reset it,
    # and a reset throws the 503 away before the caller reads it: the SDKs then retry at once.
    with bounded_server(tmp_path, fd_limit=256, connections=2, idle=3600.0) as (url, _, _), ExitStack() as stack:
        for serving in idle_connections(stack, url, 2):
            # Each serves a request whose body is still to come: the app reading it is when the
            # server sends "100 Continue".
            serving.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n")
            assert serving.recv(4096).startswith(b"HTTP/1.1 100 ")
        request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (256_000, b"x" * 256_000)
        for _ in range(10):
            with socket.create_connection(url.removeprefix("http://").split(":"), timeout=10) as caller:
                caller.sendall(request)
                answer = b""
                while chunk := caller.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
            assert b"Retry-After: 1" in answer and b'"busy"' in answer


def test_the_budget_leaves_connections_room_under_any_limit() -> None:
    for fd_limit in (64, 256, 1024, 65536):
        budget = fd_budget(64, fd_limit)
        assert 1 <= budget.open_vaults <= 64 and budget.connections >= 8
    assert fd_budget(64, 1024).open_vaults == 64


def test_the_http_clients_line_for_each_forwarded_call_shows_only_when_debugging() -> None:
    assert logging_config("info")["loggers"]["httpx"]["level"] == "WARNING"
    assert logging_config("warning")["loggers"]["httpcore"]["level"] == "WARNING"
    assert logging_config("debug")["loggers"]["httpx"]["level"] == "DEBUG"
    assert logging_config("info")["loggers"]["uvicorn.access"]["level"] == "INFO"  # the access log stays


def test_a_logged_exception_is_one_gated_line_without_a_traceback() -> None:
    import logging

    from memvault.cli.server_limits import OneLineFormatter

    try:
        raise OSError("card 4111 1111 1111 1111 refused\nsecond line")
    except OSError:
        record = logging.LogRecord("memvault", logging.ERROR, __file__, 1, "open failed", None, sys.exc_info())
    record.exc_text = "Traceback (most recent call last): cached by someone else"
    line = OneLineFormatter("%(levelname)s: %(message)s").format(record)
    assert line.startswith("ERROR: open failed | OSError: card ") and "\n" not in line
    assert "4111 1111 1111 1111" not in line and "Traceback" not in line and "second line" not in line
    assert record.exc_text == "Traceback (most recent call last): cached by someone else"  # left for other handlers


def read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """The next ``count`` answers' bodies on ``sock`` (each with a Content-Length)."""
    data, bodies = b"", []
    while len(bodies) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode()
            length = int(head.lower().split("content-length: ")[1].split("\r\n")[0])
            if len(data) >= head_end + 4 + length:
                bodies.append(data[head_end + 4: head_end + 4 + length])
                data = data[head_end + 4 + length:]
                continue
        more = sock.recv(65536)
        assert more, f"closed after {len(bodies)} answers"
        data += more
    return bodies


def test_a_request_head_past_its_limit_is_answered_431_and_closed(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=100, idle=30.0) as (url, _, log), ExitStack() as stack:
        endless, padded, whole = idle_connections(stack, url, 3)
        # One header that never ends, many short headers a few at a time, and a whole request whose
        # one header is past the limit, in one write (the server may close before it has read what
        # is sent after its limit).
        sending = [(endless, b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: "), *[(endless, b"a" * 1000)] * 200,
                   (whole, b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: %s\r\n\r\n" % (b"e" * 20_000)),
                   (padded, b"GET / HTTP/1.1\r\nHost: x\r\n"),
                   *[(padded, b"X-Pad-%d: %s\r\n" % (number, b"b" * 100)) for number in range(400)]]
        for sock, data in sending:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(data)
        for sock in (endless, padded, whole):
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
            assert b'"headers_too_large"' in answer
        assert "request head exceeded" in log.read_text()
        assert answers(url, deadline=30)


def test_heads_within_the_limit_long_bodies_and_pipelined_requests_are_served(tmp_path: Path) -> None:
    with bounded_server(tmp_path, fd_limit=256, connections=100, idle=30.0) as (url, _, _), ExitStack() as stack:
        sock, = idle_connections(stack, url, 1)
        # Headers just under the limit, sent a header at a time.
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        for number in range(120):
            sock.sendall(b"X-Pad-%d: %s\r\n" % (number, b"c" * 100))
        sock.sendall(b"\r\n")
        assert read_answers(sock, 1) == [b"ok"]
        # A body far longer than the head's limit, in the same write as its headers, then a second
        # request behind it in the same write (pipelined), then a third head in small pieces.
        body = b"d" * 300_000
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
                     + b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        assert read_answers(sock, 2) == [b"300000", b"3"]
        for piece in (b"GET / HT", b"TP/1.1\r\nHo", b"st: x\r\n", b"\r\n"):
            sock.sendall(piece)
        assert read_answers(sock, 1) == [b"ok"]

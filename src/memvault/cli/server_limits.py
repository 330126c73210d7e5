"""What keeps `memvault serve` alive and answering when callers press on its limits: file
descriptors shared out between open vaults and connections, connections that send no request
closed, and logging that never opens a file (so running out of descriptors is logged, not fatal)."""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import time
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memvault.api.errors import error_body
from memvault.core.redaction.logs import loggable

log = logging.getLogger("memvault.server")

# Descriptors the process holds whatever the load: the shared database and vector index (each with
# -wal and -shm), the embedding model, the listening socket, stdio, and upstream connections of the
# memory router's calls beyond the connections' own share.
RESERVED_FDS = 64
# Each connection may hold a second descriptor: the upstream call it relays.
FDS_PER_CONNECTION = 2
FDS_PER_VAULT = 3  # the database, its -wal and its -shm
MIN_CONNECTIONS = 8
# The answer to a connection beyond the limit, before it sends anything: plain, and closed.
_BUSY_BODY = json.dumps(error_body("busy", "the server is serving all the connections it can; retry")).encode()
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))
# The answer to a request whose body stopped arriving, and the connection is closed.
_STALLED_BODY = json.dumps(error_body("timeout", "the request body stopped arriving; send it again")).encode()
STALLED = (b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nConnection: close\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(_STALLED_BODY), _STALLED_BODY))
# A body must arrive at this many bytes a second on average, once it has had the idle time to
# start: a body trickled a byte at a time would otherwise hold its connection for days, and enough
# of them, sent with no credential at all, every connection the server serves.
MIN_BODY_BYTES_PER_SECOND = 1024
# A request line and headers longer than this are refused as they arrive: the parser would hold
# them whole (h11, uvicorn's other parser, allows as much by default).
MAX_HEAD_BYTES = 16 * 1024
# A refused connection (busy, or a head too long) is half-closed after its answer, and what the
# caller still sends is read and dropped until it closes, or for this long: closed at once, the
# caller's bytes arriving after the close would make the kernel reset the connection, and a reset
# throws away the answer before the caller reads it. At most ``MOST_LINGERING`` wait so at once.
REFUSAL_LINGER_SECONDS = 1.0
MOST_LINGERING = 64
_TOO_LONG_BODY = json.dumps(error_body(
    "headers_too_large", f"the request line and headers exceed {MAX_HEAD_BYTES // 1024} KiB")).encode()
HEAD_TOO_LONG = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
                 b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_TOO_LONG_BODY), _TOO_LONG_BODY))


@dataclass(frozen=True)
class FdBudget:
    """How the process's open-file limit is shared out."""

    fd_limit: int
    open_vaults: int
    connections: int


def fd_budget(open_vaults: int, fd_limit: int | None = None) -> FdBudget:
    """Vaults held open (at most ``open_vaults``, fewer if they would take more than half of what the
    limit leaves) and connections served at once, within ``fd_limit`` (the process's soft
    RLIMIT_NOFILE)."""
    if fd_limit is None:
        fd_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    room = max(0, fd_limit - RESERVED_FDS)
    # Open vaults may take up to half the room: a closed vault costs a reopen, a refused connection a caller.
    vaults = max(1, min(open_vaults, room // 2 // FDS_PER_VAULT))
    connections = max(MIN_CONNECTIONS, (room - vaults * FDS_PER_VAULT) // FDS_PER_CONNECTION)
    return FdBudget(fd_limit, vaults, connections)


class OneLineFormatter(logging.Formatter):
    """A record on one line; an exception as its type and first line, without a traceback: a
    traceback opens source files (which fails when descriptors run out) and is long. The line
    passes the secret gate, as every record's message already has."""

    def formatException(self, ei: Any) -> str:
        exc = ei[1]
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        return loggable(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)

    def formatStack(self, stack_info: str) -> str:
        return ""

    def format(self, record: logging.LogRecord) -> str:
        # Rendered from the exception itself: not a traceback another formatter or the record
        # factory may have cached on the record (and left there for other handlers).
        cached, record.exc_text = record.exc_text, None
        try:
            return super().format(record).replace("\n", " | ")
        finally:
            record.exc_text = cached


class AcceptStormQuieted(logging.Filter):
    """One line a second of asyncio's "socket.accept() out of system resource". Out of descriptors,
    CPython's accept loop goes on trying every connection waiting in the listen backlog, logging
    each: thousands of lines a burst of connections, which a caller without a credential could
    make at will."""

    def __init__(self) -> None:
        super().__init__()
        self._last = -ACCEPT_STORM_QUIET_SECONDS

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "asyncio" or not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = time.monotonic()
        if now - self._last < ACCEPT_STORM_QUIET_SECONDS:
            return False
        self._last = now
        return True


ACCEPT_STORM_QUIET_SECONDS = 1.0


def logging_config(level: str) -> dict[str, Any]:
    """The server's logging (``logging.config.dictConfig``): every logger, uvicorn's and libraries'
    included, to stderr, which is already open, through ``OneLineFormatter``. Replaces whatever a
    library installed on the root logger."""
    handler = {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stderr",
               "filters": ["accept_storm"]}
    quiet = level.upper() if level.upper() == "DEBUG" else "WARNING"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": OneLineFormatter, "format": "%(levelname)s: %(name)s: %(message)s"},
                       "access": {"()": OneLineFormatter, "format": "%(levelname)s: %(message)s"}},
        "filters": {"accept_storm": {"()": AcceptStormQuieted}},
        "handlers": {"default": handler, "access": {**handler, "formatter": "access"}},
        "root": {"handlers": ["default"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": [], "level": level.upper(), "propagate": True},
            "uvicorn.error": {"handlers": [], "level": level.upper(), "propagate": True},
            "uvicorn.access": {"handlers": ["access"], "level": level.upper(), "propagate": False},
            # The HTTP client's line for every forwarded call repeats the access log's, at a cost
            # on every call: shown when debugging only.
            **{name: {"level": quiet} for name in ("httpx", "httpcore")},
        },
    }


def _head_end(data: bytes) -> int:
    """Where the blank line that ends a request's head ends in ``data`` (-1 if it is not there)."""
    crlf = data.find(b"\r\n\r\n")
    # Looked for only before the first CRLF one: a body after it may hold anything.
    lf = data.find(b"\n\n", 0, len(data) if crlf < 0 else crlf)
    return lf + 2 if lf >= 0 else crlf + 4 if crlf >= 0 else -1


def bounded_protocol(max_connections: int, idle_seconds: float) -> type[HttpToolsProtocol]:
    """uvicorn's HTTP/1.1 protocol over the compiled parser (httptools) with four bounds: a
    connection that has not sent a whole request's headers within ``idle_seconds`` of opening or of
    its last response is closed; a request whose body stops arriving for ``idle_seconds``, or
    arrives slower than ``MIN_BODY_BYTES_PER_SECOND`` once ``idle_seconds`` have passed, is
    answered 408 and closed; a request line and headers over ``MAX_HEAD_BYTES`` are answered 431 and
    closed; and past ``max_connections`` open at once a new connection takes the place of the one
    that has waited longest for a request, or is closed as it arrives when every other is serving
    one. So idle, trickling or endless requests cannot pile up, and cannot keep a new caller out."""

    class BoundedProtocol(HttpToolsProtocol):
        _waiting: asyncio.TimerHandle | None = None
        _stalling: asyncio.TimerHandle | None = None
        # Bytes of the current request's head so far (None from its headers' end to the end of its
        # body), and the last bytes of the read before (a blank line may span two reads). A head
        # that begins in the read where the request before it ended is counted from the next read.
        _head_bytes: int | None = 0
        _head_tail = b""
        # When the current request's body began (its headers' end), and its bytes so far.
        _body_began = 0.0
        _body_bytes = 0
        # Refused: what arrives is dropped; ``_linger`` closes it if the caller does not.
        _refused = False
        _linger: asyncio.TimerHandle | None = None
        lingering = 0  # refused connections of the server waiting for their callers to close

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()
            if len(self.connections) > max_connections and not self._close_oldest_idle():
                log.warning("connection refused: %d connections are open, each serving a request", max_connections)
                self._refuse(BUSY)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._watch_body(False)
            if self._linger is not None:
                self._linger.cancel()
                self._linger = None
                BoundedProtocol.lingering -= 1
            super().connection_lost(exc)

        def eof_received(self) -> None:
            if self._refused:
                self.transport.close()
                return
            super().eof_received()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._head_bytes is not None:
                seen = self._head_tail + data
                end = _head_end(seen)
                self._head_bytes += len(data) if end < 0 else max(0, end - len(self._head_tail))
                self._head_tail = seen[-3:]
                if self._head_bytes > MAX_HEAD_BYTES:
                    log.info("closed a connection whose request head exceeded %d bytes", MAX_HEAD_BYTES)
                    self._refuse(HEAD_TOO_LONG)
                    return
            super().data_received(data)
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                self._disarm()  # a request is being served: its handler's own limits apply
                arriving = cycle.more_body and not cycle.response_started
                if arriving and self._trickling(len(data)):
                    self._close_stalled(trickled=True)
                    return
                # Each arrival restarts the body's clock, so only a body that stops is cut off.
                self._watch_body(arriving)

        def on_headers_complete(self) -> None:
            self._head_bytes = None
            self._body_began, self._body_bytes = self.loop.time(), 0
            super().on_headers_complete()

        def _trickling(self, arrived: int) -> bool:
            """Whether the body, ``arrived`` bytes more of it now, comes slower than the floor."""
            self._body_bytes += arrived
            elapsed = self.loop.time() - self._body_began
            return elapsed > idle_seconds and self._body_bytes < MIN_BODY_BYTES_PER_SECOND * elapsed

        def on_message_complete(self) -> None:
            self._head_bytes, self._head_tail = 0, b""
            super().on_message_complete()

        def on_response_complete(self) -> None:
            self._watch_body(False)
            self._arm()  # before the next pipelined request, which disarms it again
            super().on_response_complete()

        def _watch_body(self, arriving: bool) -> None:
            if self._stalling is not None:
                self._stalling.cancel()
            self._stalling = self.loop.call_later(idle_seconds, self._close_stalled) if arriving else None

        def _close_stalled(self, trickled: bool = False) -> None:
            self._stalling = None
            cycle = self.cycle
            if cycle is None or not cycle.more_body or cycle.response_started or self.transport.is_closing():
                return
            if self.flow.read_paused or cycle.waiting_for_100_continue:
                self._watch_body(True)  # the server is the one not reading yet: nothing stalled
                return
            if trickled:
                log.info("closed a connection whose request body arrived slower than %d bytes a second",
                         MIN_BODY_BYTES_PER_SECOND)
            else:
                log.info("closed a connection whose request body stopped arriving for %.0f s", idle_seconds)
            self.transport.write(STALLED)
            self.transport.close()

        def _refuse(self, answer: bytes) -> None:
            """Answer ``answer`` (which says the connection closes) before any request is served."""
            self._disarm()
            self._refused = True
            self.connections.discard(self)  # it serves nothing, and must not keep a caller out
            self.transport.write(answer)
            if BoundedProtocol.lingering >= MOST_LINGERING or not self.transport.can_write_eof():
                self.transport.close()
                return
            self.transport.write_eof()
            BoundedProtocol.lingering += 1
            self._linger = self.loop.call_later(REFUSAL_LINGER_SECONDS, self.transport.close)

        def _arm(self) -> None:
            self._disarm()
            self._waiting = self.loop.call_later(idle_seconds, self._close_idle)

        def _disarm(self) -> None:
            if self._waiting is not None:
                self._waiting.cancel()
                self._waiting = None

        def _close_oldest_idle(self) -> bool:
            """Make room by closing the connection that has waited longest for a request (a new
            caller is served before one that sends nothing); False if every other one is busy."""
            idle = [c for c in self.connections if c is not self and isinstance(c, BoundedProtocol) and c._waiting]
            if not idle:
                return False
            oldest = min(idle, key=lambda c: c._waiting.when() if c._waiting else 0.0)
            oldest._disarm()
            oldest.transport.close()
            return True

        def _close_idle(self) -> None:
            self._waiting = None
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

    return BoundedProtocol

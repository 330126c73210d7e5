"""MCP over stdio for `memvault mcp`: one JSON-RPC message a line, read by ``messages.read_message``
and handed to the SDK's server. Unlike the SDK's own stdio transport:

- every line that is not a message memvault serves is answered with JSON-RPC's error (the SDK
  drops some, and its client would wait forever for the answer);
- a line is held to the size of a request body over HTTP (``max_body_bytes``): a longer one is
  answered with an error naming the limit and skipped without being kept, so no argument reaches a
  tool longer than it could over HTTP;
- a request other than ``initialize`` or ``ping`` before ``initialize`` is answered as an invalid
  request that says so (the SDK answers it as one with invalid parameters);
- a blank line is no message and gets no answer; a line may end in ``\\r\\n``;
- when stdin ends the SDK cancels the calls still running, which could stop a store between the
  vault and its mirror; here the session ends only once every request it read has been answered."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from memvault.api.mcp.messages import BEFORE_INITIALIZE, Refusal, not_initialized, read_message, too_long

RequestId = int | str | None
# A longer line is read this much at a time while it is skipped.
SKIP_CHUNK = 1 << 16


class Answers:
    """The stream of messages to the client, noting which requests have been answered."""

    def __init__(self, inner: MemoryObjectSendStream[SessionMessage]) -> None:
        self._inner = inner
        # A count per id: a client may reuse an id while its first request is still running.
        self.unanswered: Counter[RequestId] = Counter()
        self.all_answered = anyio.Event()
        self.all_answered.set()

    def asked(self, request: RequestId) -> None:
        self.unanswered[request] += 1
        self.all_answered = anyio.Event()

    def withdrawn(self, request: Any) -> None:
        """A request the client cancelled, which the server leaves unanswered."""
        self._settled(request)

    def _settled(self, request: Any) -> None:
        self.unanswered[request] -= 1
        if self.unanswered[request] <= 0:
            del self.unanswered[request]
        if not self.unanswered:
            self.all_answered.set()

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._settled(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Answers:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


class LineTooLong(Exception):
    """A line longer than the limit, already read to its end and dropped."""


def read_line(stdin: BinaryIO, limit: int) -> bytes | None:
    """The next line without its line ending, None at the end of input. A line longer than
    ``limit`` bytes is read to its end a piece at a time and dropped, so at most ``limit`` and a
    piece of it are ever held."""
    line = stdin.readline(limit + 2)  # the longest line allowed and "\r\n"
    if not line:
        return None
    if len(line) == limit + 2 and not line.endswith(b"\n"):
        while (piece := stdin.readline(SKIP_CHUNK)) and not piece.endswith(b"\n"):
            pass
        raise LineTooLong
    text = line.removesuffix(b"\n").removesuffix(b"\r")
    if len(text) > limit:
        raise LineTooLong
    return text


async def read_messages(
    stdin: BinaryIO, limit: int, to_server: MemoryObjectSendStream[SessionMessage | Exception], answers: Answers
) -> None:
    """Hand each message on ``stdin`` to the server and answer each line that is none; at the end
    of input, end the server's input once every request read has been answered."""
    initialized = False
    async with to_server:
        while True:
            try:
                line = await anyio.to_thread.run_sync(read_line, stdin, limit, abandon_on_cancel=True)
            except LineTooLong:
                await answers.send(SessionMessage(too_long(limit).answer))
                continue
            if line is None:
                break
            if not line.strip():
                continue
            message = read_message(line)
            if isinstance(message, Refusal):
                await answers.send(SessionMessage(message.answer))
                continue
            if isinstance(message, JSONRPCRequest):
                answers.asked(message.id)
                if not initialized and message.method not in BEFORE_INITIALIZE:
                    await answers.send(SessionMessage(not_initialized(message.id).answer))
                    continue
                initialized = initialized or message.method == "initialize"
            elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                answers.withdrawn((message.params or {}).get("requestId"))
            await to_server.send(SessionMessage(message))
        await answers.all_answered.wait()


async def write_messages(from_server: MemoryObjectReceiveStream[SessionMessage], stdout: BinaryIO) -> None:
    async with from_server:
        async for item in from_server:
            line = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            await anyio.to_thread.run_sync(_write, stdout, line)


def _write(stdout: BinaryIO, line: bytes) -> None:
    stdout.write(line)
    stdout.flush()


@contextmanager
def claimed(fd: int, diversion: int) -> Iterator[int]:
    """A descriptor of its own for ``fd``'s stream, with ``fd`` pointed at ``diversion`` meanwhile:
    a tool, or a process it starts, reads nothing from stdin, and what one prints goes to stderr
    instead of between the messages. The descriptor of its own stays open: a thread may still be
    blocked reading it, and a closed number could be reused under it."""
    own = os.dup(fd)
    os.dup2(diversion, fd)
    os.close(diversion)
    try:
        yield own
    finally:
        os.dup2(own, fd)


async def serve_stdio(server: MCPServer[Any], max_line_bytes: int) -> None:
    """Serve ``server`` on stdin and stdout until the client closes stdin."""
    # MCPServer runs only the SDK's own stdio transport; its low-level server takes any streams.
    lowlevel = server._lowlevel_server
    with claimed(0, os.open(os.devnull, os.O_RDONLY)) as stdin_fd, claimed(1, os.dup(2)) as stdout_fd:
        stdin = os.fdopen(stdin_fd, "rb", closefd=False)
        stdout = os.fdopen(stdout_fd, "wb", closefd=False)
        to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        answers = Answers(to_client)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_messages, stdin, max_line_bytes, to_server, answers)
            tasks.start_soon(write_messages, from_server, stdout)
            await lowlevel.run(from_client, answers, lowlevel.create_initialization_options())
            await answers.aclose()

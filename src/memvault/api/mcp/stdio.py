"""MCP over stdio for `memvault mcp`, on the SDK's stdio transport with two changes:

- the transport drops a line that is not a JSON-RPC message, so a client that sent a request of the
  wrong shape would wait for its answer forever; here every such line is answered with JSON-RPC's
  own error (parse error, or invalid request under the request's id when the line names one);
- when stdin ends the SDK cancels the calls still running, which could stop a store between the
  vault and its mirror; here the session ends only once every request it read has been answered."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

RequestId = int | str | None


def request_id_of(error: Exception) -> RequestId:
    """The id a rejected line gave its request, when it gave one of JSON-RPC's types."""
    if not isinstance(error, ValidationError):
        return None
    for problem in error.errors():
        sent = problem.get("input")
        if isinstance(sent, dict):
            found = sent.get("id")
            if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
                return found
    return None


def rejection(error: Exception) -> JSONRPCError:
    """The answer to a line the transport could not read as a JSON-RPC message; its text names
    no part of the line, which may hold anything."""
    unreadable = isinstance(error, ValidationError) and any(p["type"] == "json_invalid" for p in error.errors())
    if unreadable:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    return JSONRPCError(jsonrpc="2.0", id=request_id_of(error),
                        error=ErrorData(code=INVALID_REQUEST, message="Invalid request: not a JSON-RPC 2.0 message"))


class _Closable(Protocol):
    async def aclose(self) -> None: ...


Inner = TypeVar("Inner", bound=_Closable)


class _Wrapping(Generic[Inner]):
    """A stream around one of the transport's: closed with it, and its own context manager."""

    _inner: Inner

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class Answers(_Wrapping[WriteStream[SessionMessage]]):
    """The transport's write stream, noting which requests have been answered."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self.unanswered: set[RequestId] = set()
        self.all_answered = anyio.Event()
        self.all_answered.set()

    def asked(self, request: RequestId) -> None:
        self.unanswered.add(request)
        self.all_answered = anyio.Event()

    def withdrawn(self, request: Any) -> None:
        """A request the client cancelled, which the server leaves unanswered."""
        self.unanswered.discard(request)
        if not self.unanswered:
            self.all_answered.set()

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self.unanswered.discard(item.message.id)
            if not self.unanswered:
                self.all_answered.set()


class AnsweringRejects(_Wrapping[ReadStream[SessionMessage | Exception]]):
    """The transport's read stream, with each line it could not read answered instead of handed on,
    and its end held back until every request read from it is answered."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], answers: Answers) -> None:
        self._inner = inner
        self._answers = answers

    async def receive(self) -> SessionMessage:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._answers.all_answered.wait()
                raise
            if isinstance(item, Exception):
                await self._answers.send(SessionMessage(rejection(item)))
                continue
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self._answers.asked(message.id)
            elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                self._answers.withdrawn((message.params or {}).get("requestId"))
            return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdin and stdout until the client closes stdin."""
    # MCPServer runs only the SDK's own stdio transport; its low-level server takes any streams.
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        answers = Answers(write_stream)
        await lowlevel.run(AnsweringRejects(read_stream, answers), answers, lowlevel.create_initialization_options())

"""The one streaming helper for every provider.

``RelayResponse`` hands each upstream chunk to the client the moment it arrives, with a tap looking
at it on the side: an SSE tap parses events (asking the provider's codec which one ends the
stream), a JSON tap keeps the body. The chunk that ends the answer first waits for the call's
journal (``before_end``); once the turn counts as delivered the tap goes to ``on_delivered``,
which schedules the turn's storing.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Protocol

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from memvault.api.providers.base import ProviderCodec, SseEvent
from memvault.core.memory.chat_calls import Reply
from memvault.core.ports import UpstreamResponse

log = logging.getLogger("memvault.router")

# A reply this large, as the provider sends it (a stream's events and framing count), is relayed in
# full but not remembered: the tap holds what it reads in memory until the answer ends, and a chat
# turn is far smaller.
MAX_TAPPED_BYTES = 4 * 1024 * 1024
# Past that size the tap reads on for the provider's counts, which its last events carry, keeping
# only these many of the events after the limit.
TAIL_EVENTS = 16


def _too_large(counted: Reply | None = None) -> Reply:
    """Not remembered; ``counted``'s tokens, when the tap could still read them, are owed."""
    log.warning("an answer of more than %d bytes as sent was relayed but is not remembered", MAX_TAPPED_BYTES)
    return Reply(complete=False) if counted is None else replace(counted, text="", complete=False)


_LINE = re.compile(r"\r\n|\r|\n")


class SseParser:
    """Incremental parser of the ``text/event-stream`` format: any line ending, split anywhere."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buffer += self._decoder.decode(chunk)
        return self._drain(final=False)

    def close(self) -> list[SseEvent]:
        """Flush what is left; a last event without its blank line is still dispatched."""
        self._buffer += self._decoder.decode(b"", final=True)
        return self._drain(final=True)

    def _drain(self, final: bool) -> list[SseEvent]:
        lines, position = [], 0
        for match in _LINE.finditer(self._buffer):
            if match.group() == "\r" and match.end() == len(self._buffer) and not final:
                break  # maybe the first half of a CRLF split across chunks
            lines.append(self._buffer[position : match.start()])
            position = match.end()
        self._buffer = self._buffer[position:]
        if final:
            lines.extend([self._buffer, ""] if self._buffer else [""])
            self._buffer = ""
        return self._lines(lines)

    def _lines(self, lines: list[str]) -> list[SseEvent]:
        events = []
        for line in lines:
            if not line:
                if self._data or self._event:
                    events.append(SseEvent(self._event or "message", "\n".join(self._data)))
                self._event, self._data = "", []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
        return events


class Tap(Protocol):
    """Follows a relayed body on the side, chunk by chunk, as the client was sent it."""

    def feed(self, chunk: bytes) -> None: ...

    @property
    def ended(self) -> bool:
        """The chunks fed end the answer (the provider's last event, a whole JSON body): nothing
        after them changes the reply."""
        ...

    def answered(self) -> bool:
        """The chunks fed hold a complete answer (asked once, when a body was cut short)."""
        ...

    def reply(self) -> Reply: ...


class SseTap:
    def __init__(self, codec: ProviderCodec) -> None:
        self._codec = codec
        self._parser = SseParser()
        self._events: list[SseEvent] = []
        self._tail: deque[SseEvent] = deque(maxlen=TAIL_EVENTS)
        self._size = 0
        self.ended = False

    def feed(self, chunk: bytes) -> None:
        within = self._size <= MAX_TAPPED_BYTES
        self._size += len(chunk)
        events = self._parser.feed(chunk)
        if within:
            self._events.extend(events)
        else:
            self._tail.extend(events)
        self.ended = self.ended or any(self._codec.ends_stream(event) for event in events)

    def answered(self) -> bool:
        reply = read_reply(self)
        return reply is not None and reply.complete

    def reply(self) -> Reply:
        if self._size > MAX_TAPPED_BYTES:
            # The text is not kept; the first events and the last still say what the answer counted.
            return _too_large(self._codec.stream_reply(self._events + list(self._tail) + self._parser.close()))
        return self._codec.stream_reply(self._events + self._parser.close())


class JsonTap:
    """A JSON body has no event saying the answer is over: it is over at its last byte, which a
    client reading a body of known length (``length``, its ``Content-Length`` as relayed) knows
    before the response ends. A body sent in chunks ends only with the response."""

    def __init__(self, codec: ProviderCodec, length: int | None = None) -> None:
        self._codec = codec
        self._body = bytearray()
        self._length = length
        self.ended = False

    def feed(self, chunk: bytes) -> None:
        if len(self._body) <= MAX_TAPPED_BYTES:
            self._body.extend(chunk)
        self.ended = self._length is not None and len(self._body) >= self._length

    def answered(self) -> bool:
        try:
            return self.reply().complete
        except ValueError:  # cut off mid-body: not an answer, and nothing worth a warning
            return False

    def reply(self) -> Reply:
        if len(self._body) > MAX_TAPPED_BYTES:
            return _too_large()
        body = json.loads(self._body)
        if isinstance(body, list):
            # A stream sent as one JSON array (Gemini without `alt=sse`): the same chunks, framed
            # differently.
            return self._codec.stream_reply([SseEvent("message", json.dumps(chunk)) for chunk in body])
        return self._codec.reply(body) if isinstance(body, dict) else Reply(complete=False)


def tap_for(codec: ProviderCodec, content_type: str, length: int | None = None) -> Tap:
    """The tap for a body of ``content_type`` (and, when the client is told it, ``length``)."""
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        return SseTap(codec)
    return JsonTap(codec, length)


class ClientGone(Exception):
    """The client stopped reading before the body was over."""


class RelayResponse(Response):
    """An upstream response relayed to the client as it arrives, each chunk shown to the tap as it
    goes out. The chunk that ends the answer (the stream's last event, the end of a JSON body)
    waits for ``before_end``, which makes the answer durable before the client has it all; then
    the turn counts as delivered and ``on_delivered`` gets the tap. When the relay ends without
    such a chunk (upstream's end, the client leaving, upstream failing), the answer is delivered
    if the whole body reached a client still connected or what the client was sent holds a
    complete answer. An answer the client left before it was complete (a timeout, then maybe a
    retry) is not remembered. Upstream is closed however the relay ends, and as soon as the client
    leaves: an upstream that keeps its connection open after its last event delays nothing."""

    def __init__(
        self,
        upstream: UpstreamResponse,
        headers: list[tuple[bytes, bytes]],
        tap: Tap | None = None,
        on_delivered: Callable[[Tap], None] | None = None,
        on_ended: Callable[[], None] | None = None,
        before_end: Callable[[Tap], Awaitable[None]] | None = None,
    ) -> None:
        self.upstream = upstream
        self.status_code = upstream.status
        # Set raw: upstream may repeat a header (set-cookie), and no content type is invented.
        self.raw_headers = headers
        self.background = None
        self.on_delivered = on_delivered
        # Called once the relay ended if ``on_delivered`` never was (an answer not delivered).
        self.on_ended = on_ended
        self.before_end = before_end
        # The tap still following the body: None once it was delivered, or lost its way.
        self._tap = tap if on_delivered is not None else None
        # The tap has seen a chunk the client is still being sent.
        self._sending = False
        # ``before_end`` ran: the answer's end went out to the client, whatever happens next.
        self._ending = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gone = asyncio.Event()
        watcher = asyncio.ensure_future(_until_disconnect(receive, gone))
        pump = asyncio.ensure_future(self._pump(send, gone))
        try:
            await asyncio.wait((pump, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            pump.cancel()
            await asyncio.wait((pump, watcher))
            # However the relay ended, even before the pump ever ran: the client, upstream, us.
            await self.upstream.aclose()
        failure = None if pump.cancelled() else pump.exception()
        whole = not pump.cancelled() and failure is None
        tap = self._tap
        if tap is not None and (whole or self._ending or (not self._sending and tap.answered())):
            self._deliver(tap)
        if self.on_ended is not None:
            self.on_ended()
        if failure is not None and not isinstance(failure, ClientGone):
            raise failure

    async def _pump(self, send: Send, gone: asyncio.Event) -> None:
        async def to_client(message: Message) -> None:
            try:
                await send(message)
            except Exception as exc:  # OSError by the ASGI spec; on Workers the response stream's error
                log.info("the client stopped reading: %s", type(exc).__name__)
                raise ClientGone from exc

        await to_client({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        async for chunk in self.upstream.aiter_bytes():
            if gone.is_set():
                raise ClientGone
            tap = self._tap
            if tap is not None and self._follow(tap, chunk) and tap.ended:
                await self._end(tap)
            self._sending = tap is not None
            await to_client({"type": "http.response.body", "body": chunk, "more_body": True})
            self._sending = False
            if tap is not None and self._tap is tap and tap.ended:
                # The store need not wait for upstream's end, nor for a client that never says it left.
                self._deliver(tap)
            # Let a hang-up be heard before the next chunk: chunks upstream already sent arrive
            # without a pause, and writing them on to a closed connection is wasted (and logged).
            await asyncio.sleep(0)
        if self._tap is not None and self._tap.answered():
            await self._end(self._tap)  # a body with no closing event: its end is the answer's
        await to_client({"type": "http.response.body", "body": b"", "more_body": False})

    def _follow(self, tap: Tap, chunk: bytes) -> bool:
        """Show ``tap`` a chunk on its way to the client; whether it still follows the body."""
        try:
            tap.feed(chunk)
        except Exception as exc:  # a parsing bug must never cut the client's stream
            log.warning("could not follow the upstream body: %s", type(exc).__name__)
            self._tap = None
            return False
        return True

    async def _end(self, tap: Tap) -> None:
        if self.before_end is not None and not self._ending:
            self._ending = True
            await self.before_end(tap)

    def _deliver(self, tap: Tap) -> None:
        self._tap = None
        self.on_ended = None
        if self.on_delivered is not None:
            self.on_delivered(tap)


async def _until_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


def read_reply(tap: Tap) -> Reply | None:
    """The reply a finished tap assembled; ``None`` if the body could not be read."""
    try:
        return tap.reply()
    except Exception as exc:  # an unreadable body is relayed, just not remembered
        log.warning("could not read the upstream reply: %s", type(exc).__name__)
        return None

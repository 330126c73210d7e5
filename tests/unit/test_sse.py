"""The one SSE helper: events parsed whatever the chunking, bytes relayed untouched."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.api.providers import CODECS
from memvault.api.providers.base import SseEvent
from memvault.api.providers.sse import RelayResponse, SseParser, Tap, read_reply, tap_for
from memvault.core.memory.chat_calls import Reply

STREAM = (
    b": keep-alive\r\n\r\n"
    b'event: message_start\r\ndata: {"a": 1}\r\n\r\n'
    b"data: line one\ndata: line two\n\n"
    b"event: ping\rdata: {}\r\r"
    b"data: [DONE]\n\n"
)
EXPECTED = [
    SseEvent("message_start", '{"a": 1}'),
    SseEvent("message", "line one\nline two"),
    SseEvent("ping", "{}"),
    SseEvent("message", "[DONE]"),
]


def parse_in_chunks(data: bytes, cuts: list[int]) -> list[SseEvent]:
    parser, events, start = SseParser(), [], 0
    for cut in sorted(cuts):
        events += parser.feed(data[start:cut])
        start = cut
    events += parser.feed(data[start:])
    return events + parser.close()


def test_parses_every_line_ending_and_skips_comments() -> None:
    assert parse_in_chunks(STREAM, []) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert parse_in_chunks(STREAM, cuts) == EXPECTED


def test_multibyte_characters_split_across_chunks() -> None:
    data = "data: héllo ✓\n\n".encode()
    assert parse_in_chunks(data, [8, 9, 15]) == [SseEvent("message", "héllo ✓")]


def test_a_last_event_without_its_blank_line_is_flushed_on_close() -> None:
    assert parse_in_chunks(b"data: tail", []) == [SseEvent("message", "tail")]


class FakeUpstream:
    """Chunks, then either its end or (``open_after``) a connection it keeps open until released,
    as a provider that lingers after its last event."""

    def __init__(self, chunks: list[bytes], fail_after: int | None = None, open_after: bool = False) -> None:
        self.chunks, self.fail_after, self.closed = chunks, fail_after, False
        self.status = 200
        self.headers = [("content-type", "text/event-stream")]
        self.read = 0
        self.release = asyncio.Event()
        if not open_after:
            self.release.set()

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for index, chunk in enumerate(self.chunks):
            if index == self.fail_after:
                raise ConnectionError("cut")
            self.read += 1
            yield chunk
        await self.release.wait()

    async def aclose(self) -> None:
        self.closed = True


def openai_chunks(words: list[str], usage: bool = False) -> list[bytes]:
    chunks = [
        f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': w}, 'finish_reason': None}]})}\n\n".encode()
        for w in words
    ]
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    chunks.append(f"data: {json.dumps(done)}\n\n".encode())
    if usage:
        counts = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": len(words)}}
        chunks.append(f"data: {json.dumps(counts)}\n\n".encode())
    return [*chunks, b"data: [DONE]\n\n"]


class Client:
    """The ASGI side of one response: what was sent, and a disconnect reported once ``leave_after``
    body chunks have been sent (never, when ``None``), or a send that fails from then on (a
    runtime that reports a client's leaving only as a failed write)."""

    def __init__(self, leave_after: int | None = None, failing: bool = False) -> None:
        self.messages: list[dict[str, Any]] = []
        self.leave_after, self.failing = leave_after, failing
        self.left = asyncio.Event()

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body" and m["body"]]

    async def send(self, message: dict[str, Any]) -> None:
        if self.failing and self.left.is_set():
            raise OSError("the client is gone")
        self.messages.append(message)
        if len(self.bodies) == self.leave_after:
            self.left.set()
        await asyncio.sleep(0)  # a write to a socket gives the loop a turn

    async def receive(self) -> dict[str, Any]:
        if self.failing:
            await asyncio.Event().wait()
        await self.left.wait()
        return {"type": "http.disconnect"}


async def respond(upstream: FakeUpstream, client: Client, content_type: str = "text/event-stream") -> list[Tap]:
    """Run a RelayResponse for ``client``; the taps delivered."""
    taps: list[Tap] = []
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], content_type), taps.append)
    await asyncio.wait_for(response({"type": "http"}, client.receive, client.send), timeout=10)
    return taps


def replies(taps: list[Tap]) -> list[Reply | None]:
    return [read_reply(tap) for tap in taps]


async def test_relay_sends_bytes_unchanged_then_reports_the_assembled_reply() -> None:
    chunks = openai_chunks(["Hel", "lo", " there"])
    upstream = FakeUpstream(chunks)
    client = Client()
    taps = await respond(upstream, client)
    assert client.bodies == chunks and client.messages[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert upstream.closed
    assert replies(taps) == [Reply("Hello there", None, None, complete=True)]


async def test_each_chunk_reaches_the_client_before_the_next_is_read() -> None:
    upstream = FakeUpstream(openai_chunks(["a", "b", "c"]))
    client = Client()
    order: list[tuple[int, int]] = []
    send = client.send

    async def noting(message: dict[str, Any]) -> None:
        await send(message)
        if message.get("body"):
            order.append((len(client.bodies), upstream.read))

    client.send = noting  # type: ignore[method-assign]
    await respond(upstream, client)
    assert order == [(n, n) for n in range(1, len(upstream.chunks) + 1)]


async def test_a_client_that_leaves_after_the_last_event_gets_its_turn_stored_at_once() -> None:
    # The OpenAI SDK stops reading at [DONE] and closes; upstream keeps its connection open.
    chunks = openai_chunks(["Yes", " indeed"], usage=True)
    upstream = FakeUpstream(chunks, open_after=True)
    taps = await respond(upstream, Client(leave_after=len(chunks)))
    assert replies(taps) == [Reply("Yes indeed", 7, 2, complete=True)]
    assert upstream.closed


async def test_the_turn_is_delivered_once_the_last_event_is_out_even_if_no_one_says_the_client_left() -> None:
    # As on Workers, where a client's leaving is not reported: the store must not wait for upstream.
    upstream = FakeUpstream(openai_chunks(["Sure"]), open_after=True)
    taps: list[Tap] = []
    delivered = asyncio.Event()

    def on_delivered(tap: Tap) -> None:
        taps.append(tap)
        delivered.set()

    client = Client()
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], "text/event-stream"), on_delivered)
    running = asyncio.ensure_future(response({"type": "http"}, client.receive, client.send))
    await asyncio.wait_for(delivered.wait(), timeout=10)
    assert not running.done() and not upstream.closed
    upstream.release.set()
    await asyncio.wait_for(running, timeout=10)
    assert replies(taps) == [Reply("Sure", complete=True)] and upstream.closed


async def test_a_client_that_leaves_after_the_finish_reason_but_before_done_gets_its_turn_stored() -> None:
    chunks = openai_chunks(["All", " set"])
    taps = await respond(FakeUpstream(chunks, open_after=True), Client(leave_after=len(chunks) - 1))
    assert replies(taps) == [Reply("All set", complete=True)]


@pytest.mark.parametrize("sent", [0, 1, 2])
async def test_a_client_that_leaves_mid_stream_gets_nothing_stored_and_upstream_closed(sent: int) -> None:
    upstream = FakeUpstream(openai_chunks(["one", "two", "three"]), open_after=True)
    client = Client(leave_after=sent)
    if sent == 0:
        client.left.set()
    taps = await respond(upstream, client)
    assert taps == [] and upstream.closed
    assert len(client.bodies) <= sent + 1  # at most the chunk already on its way


async def test_a_send_that_fails_after_the_last_event_still_delivers_and_raises_nothing() -> None:
    chunks = openai_chunks(["Fine"])
    upstream = FakeUpstream(chunks)
    taps = await respond(upstream, Client(leave_after=len(chunks), failing=True))
    assert replies(taps) == [Reply("Fine", complete=True)] and upstream.closed


async def test_a_send_that_fails_mid_stream_delivers_nothing_and_raises_nothing() -> None:
    upstream = FakeUpstream(openai_chunks(["a", "b", "c"]))
    taps = await respond(upstream, Client(leave_after=1, failing=True))
    assert taps == [] and upstream.closed


async def test_an_interrupted_body_is_not_reported() -> None:
    upstream = FakeUpstream(openai_chunks(["a", "b"]), fail_after=1)
    taps: list[Tap] = []
    client = Client()
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], "text/event-stream"), taps.append)
    with pytest.raises(ConnectionError):
        await response({"type": "http"}, client.receive, client.send)
    assert taps == []
    assert upstream.closed


async def test_an_upstream_cut_after_the_finish_reason_still_stores_what_the_client_got() -> None:
    chunks = openai_chunks(["Got", " it"])
    upstream = FakeUpstream(chunks, fail_after=len(chunks) - 1)
    taps: list[Tap] = []
    client = Client()
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], "text/event-stream"), taps.append)
    with pytest.raises(ConnectionError):
        await response({"type": "http"}, client.receive, client.send)
    assert replies(taps) == [Reply("Got it", complete=True)]


async def test_an_answer_the_client_gave_up_on_is_not_reported() -> None:
    upstream = FakeUpstream([b'{"choices": [{"message": {"content": "late"}}]}'])
    client = Client(leave_after=0)
    client.left.set()
    assert await respond(upstream, client, "application/json") == []
    assert upstream.closed


async def test_a_whole_json_body_counts_even_if_the_client_leaves_before_upstream_ends() -> None:
    body = b'{"choices": [{"message": {"content": "whole"}}]}'
    upstream = FakeUpstream([body[:20], body[20:]], open_after=True)
    taps = await respond(upstream, Client(leave_after=2), "application/json")
    assert replies(taps) == [Reply("whole")]


async def test_a_json_body_cut_short_is_not_stored_and_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    body = b'{"choices": [{"message": {"content": "half"}}]}'
    upstream = FakeUpstream([body[:20], body[20:]], open_after=True)
    with caplog.at_level(logging.WARNING):
        taps = await respond(upstream, Client(leave_after=1), "application/json")
    assert taps == [] and upstream.closed and caplog.records == []


async def test_a_body_the_tap_cannot_read_is_still_relayed() -> None:
    upstream = FakeUpstream([b"not json"])
    client = Client()
    taps = await respond(upstream, client, "application/json")
    assert client.bodies == [b"not json"]
    assert replies(taps) == [None]


async def test_a_tap_that_loses_its_way_delivers_nothing_rather_than_half_a_reply() -> None:
    class Broken:
        ended = False

        def __init__(self) -> None:
            self.fed = 0

        def feed(self, chunk: bytes) -> None:
            self.fed += 1
            if self.fed == 2:
                raise ValueError("a parsing bug")

        def answered(self) -> bool:
            return True

        def reply(self) -> Reply:
            return Reply("half")

    chunks = openai_chunks(["a", "b"])
    taps: list[Tap] = []
    client = Client()
    await RelayResponse(FakeUpstream(chunks), [], Broken(), taps.append)({"type": "http"}, client.receive, client.send)
    assert client.bodies == chunks and taps == []


@pytest.mark.parametrize(("content_type", "chunks"), [
    ("text/event-stream", openai_chunks(["Kept", " safe"], usage=True)),
    ("application/json", [b'{"choices": [{"message": {"content": "Kept', b' safe"}, "finish_reason": "stop"}]}\n']),
])
async def test_the_chunk_that_ends_the_answer_waits_for_before_end(content_type: str, chunks: list[bytes]) -> None:
    # The journal takes the answer before the client has all of it: a crash after the client's
    # last byte can no longer lose the turn.
    client = Client()
    seen_by_before_end: list[int] = []
    delivered: list[Tap] = []

    async def before_end(tap: Tap) -> None:
        seen_by_before_end.append(len(client.bodies))
        assert read_reply(tap) == Reply("Kept safe", *((7, 2) if content_type == "text/event-stream" else (None, None)))
        assert delivered == []

    upstream = FakeUpstream(chunks, open_after=content_type == "text/event-stream")
    length = None if content_type == "text/event-stream" else sum(map(len, chunks))
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], content_type, length), delivered.append,
                             before_end=before_end)
    client.leave_after = len(chunks)
    await asyncio.wait_for(response({"type": "http"}, client.receive, client.send), timeout=10)
    assert seen_by_before_end == [len(chunks) - 1] and len(delivered) == 1 and client.bodies == chunks


async def test_an_answer_cut_short_never_reaches_before_end() -> None:
    called: list[Tap] = []

    async def before_end(tap: Tap) -> None:
        called.append(tap)

    upstream = FakeUpstream(openai_chunks(["one", "two"]), open_after=True)
    client = Client(leave_after=1)
    response = RelayResponse(upstream, [], tap_for(CODECS["openai"], "text/event-stream"), lambda tap: None,
                             before_end=before_end)
    await asyncio.wait_for(response({"type": "http"}, client.receive, client.send), timeout=10)
    assert called == []


async def test_a_json_body_ends_at_its_length_or_else_with_the_response() -> None:
    body = b'{"choices": [{"message": {"content": "a } and ]"}, "finish_reason": "stop"}]}'
    sized, chunked = tap_for(CODECS["openai"], "application/json", len(body)), tap_for(CODECS["openai"], "application/json")
    for tap in (sized, chunked):
        tap.feed(body[:40])
        tap.feed(body[40:])
    assert sized.ended and not chunked.ended
    assert read_reply(sized) == read_reply(chunked) == Reply("a } and ]")


def test_an_answer_past_the_tapped_size_is_not_remembered_but_its_tokens_are_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The provider's counts come in the stream's last events, after the text the tap stops keeping.
    def event(data: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    tap = tap_for(CODECS["openai"], "text/event-stream")
    tap.feed(event({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
    words = event({"choices": [{"index": 0, "delta": {"content": "word " * 2000}}]})
    for _ in range(5 * 1024 * 1024 // len(words)):
        tap.feed(words)
    tap.feed(event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    tap.feed(event({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 900_000}}))
    tap.feed(b"data: [DONE]\n\n")
    with caplog.at_level(logging.WARNING):
        reply = tap.reply()
    assert tap.ended and not reply.complete and reply.text == ""
    assert (reply.input_tokens, reply.output_tokens) == (12, 900_000)
    assert "not remembered" in caplog.text

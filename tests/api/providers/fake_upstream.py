"""A fake OpenAI + Anthropic + Gemini upstream for tests and the latency bench.

It answers each API in its own shape (whole bodies and streams), records every request it
received, and keeps the exact bytes it sent so tests can prove the relay changed nothing. Like a
real provider it keeps a stream open a little after its last byte, and it notes, for each
response, whether its peer hung up before the response's end.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from urllib.parse import parse_qsl

import uvicorn

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
GEMINI_PATH = re.compile(r"^/v1(beta)?/models/(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent)$")
SERVER = "fake-provider/1.0"
# The longest a held response waits for its peer to hang up before it sends the rest.
HOLD_LIMIT = 30.0
# Answers of the endpoints memvault passes through without memory, by path (Gemini's by action).
PASSTHROUGH_ANSWERS: dict[str, Any] = {
    "/v1/embeddings": {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.25, -0.5, 0.125]}],
        "model": "fake-embedding",
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    },
    "/v1/completions": {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": 1700000000,
        "model": "fake-instruct",
        "choices": [{"text": " and so on.", "index": 0, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    },
    "/v1/responses/input_tokens": {"object": "response.input_tokens", "input_tokens": 17},
    "/v1/messages/count_tokens": {"input_tokens": 42},
    "countTokens": {"totalTokens": 31},
    "embedContent": {"embedding": {"values": [0.5, 0.25, -0.125]}},
    "batchEmbedContents": {"embeddings": [{"values": [0.5, 0.25, -0.125]}]},
}

_FILE = {"id": "file-fake", "object": "file", "bytes": 3, "created_at": 1700000000, "filename": "calls.jsonl",
         "purpose": "batch", "status": "processed"}
# Answers of the rest of each API (files, batches, moderations, caches), by method and path.
OTHER_ANSWERS: dict[str, Any] = {
    "POST /v1/moderations": {
        "id": "modr-fake",
        "model": "omni-moderation-latest",
        "results": [{"flagged": False, "categories": {"violence": False}, "category_scores": {"violence": 0.01},
                     "category_applied_input_types": {"violence": ["text"]}}],
    },
    "POST /v1/files": _FILE,
    "GET /v1/files": {"object": "list", "data": [_FILE], "has_more": False},
    "POST /v1/batches": {"id": "batch_fake", "object": "batch", "endpoint": "/v1/chat/completions",
                         "input_file_id": "file-fake", "completion_window": "24h", "status": "validating",
                         "created_at": 1700000000},
    "GET /v1/chat/completions": {"object": "list", "data": [], "first_id": None, "last_id": None, "has_more": False},
    "POST /v1/messages/batches": {
        "id": "msgbatch_fake", "type": "message_batch", "processing_status": "in_progress",
        "request_counts": {"processing": 1, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
        "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z", "ended_at": None,
        "cancel_initiated_at": None, "archived_at": None, "results_url": None,
    },
    "POST /v1beta/cachedContents": {"name": "cachedContents/fake", "model": "models/gemini-test",
                                    "expireTime": "2026-01-01T01:00:00Z", "usageMetadata": {"totalTokenCount": 9}},
}
OTHER_ANSWERS["POST /v1/cachedContents"] = OTHER_ANSWERS["POST /v1beta/cachedContents"]
# Gemini's answers where a path is OpenAI's too (told apart by Gemini's key header, as memvault does).
GEMINI_ANSWERS: dict[str, Any] = {
    "GET /v1/files": {"files": [{"name": "files/fake", "mimeType": "text/plain", "sizeBytes": "3", "state": "ACTIVE"}]},
}
GEMINI_ANSWERS["GET /v1beta/files"] = GEMINI_ANSWERS["GET /v1/files"]
OTHER_ANSWERS["POST /v1/interactions"] = {
    "id": "interaction-fake", "object": "interaction", "status": "completed", "model": "gemini-test",
    "outputs": [{"type": "text", "text": "Hello Amir."}], "usage": {"total_input_tokens": 7, "total_output_tokens": 3},
}


async def read_body(receive: Receive) -> bytes:
    """A request's whole body, however many messages it arrives in."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


@dataclass
class Received:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Ending:
    request: Received
    peer_left: bool  # the peer hung up before the response's end


async def peer_leaves(receive: Receive, seconds: float) -> bool:
    """Whether the peer hangs up within ``seconds`` (the request body already read)."""

    async def disconnect() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    if seconds <= 0:
        return False
    try:
        await asyncio.wait_for(disconnect(), seconds)
    except TimeoutError:
        return False
    return True


@dataclass
class Canned:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)  # sent besides the usual ones


@dataclass
class FakeUpstream:
    answer: str = "Noted, thank you."
    received: list[Received] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    canned: list[Canned] = field(default_factory=list)
    chunk_delay: float = 0.0  # seconds between body chunks, to show chunks are relayed as they come
    answer_delay: float = 0.0  # seconds before answering at all, as a slow model does
    # Seconds a streamed response stays open after its last byte, as a real provider's does (a
    # whole body, sent with its length, is over at its last byte whatever the server does next).
    linger: float = 0.3
    # Send this many body chunks, then hold the rest until the peer hangs up (a model still
    # writing its answer when the client leaves), for at most HOLD_LIMIT seconds.
    hold_after: int | None = None
    endings: list[Ending] = field(default_factory=list)
    # Awaited with each request before it is answered: a test holds an answer until an event it needs.
    before_answer: Callable[[Received], Awaitable[None]] | None = None
    # Answer a request that carries no provider key (in a key header, or Gemini's `?key=`) with 401
    # in the provider's envelope, as a real provider does (off by default: most tests send none).
    require_key: bool = False

    def reply_next_with(
        self, status: int, body: bytes, content_type: str = "application/json", headers: dict[str, str] | None = None
    ) -> None:
        self.canned.append(Canned(status, body, content_type, headers or {}))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = await read_body(receive)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = scope["query_string"].decode()
        request = Received(scope["method"], scope["path"], query, headers, body)
        self.received.append(request)
        if self.before_answer is not None:
            await self.before_answer(request)
        hold_after, linger = self.hold_after, self.linger
        if scope["path"].startswith("/upload/"):
            await self._upload(request, send)
            return
        extra: dict[str, str] = {}
        if self.require_key and not KEY_HEADERS & set(headers) and "key" not in dict(parse_qsl(query)):
            status, content_type, chunks = 401, "application/json", [missing_key_body(scope["path"])]
        else:
            extra = self.canned[0].headers if self.canned else {}
            status, content_type, chunks = self._respond(scope["method"], scope["path"], query, body,
                                                         gemini="x-goog-api-key" in headers)
        self.sent.append(b"".join(chunks))
        if self.answer_delay:
            await asyncio.sleep(self.answer_delay)
        headers = [
            (b"content-type", content_type.encode()),
            (b"server", SERVER.encode()),
            (b"date", formatdate(usegmt=True).encode()),
            *((name.encode(), value.encode()) for name, value in extra.items()),
        ]
        if len(chunks) == 1:  # a whole body, sent with its length as real providers do
            headers.append((b"content-length", str(len(chunks[0])).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        left = False
        for index, chunk in enumerate(chunks):
            if index == hold_after:
                left = await peer_leaves(receive, HOLD_LIMIT)
                if left:
                    break
            elif index and self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        streamed = len(chunks) > 1
        left = left or (streamed and await peer_leaves(receive, linger))
        if not left:
            await send({"type": "http.response.body", "body": b""})
        self.endings.append(Ending(request, left))

    async def _upload(self, request: Received, send: Send) -> None:
        """Gemini's resumable upload: the first request opens a session whose URL, on the
        provider's own host, is in a header; the file's bytes then go straight there."""
        if "upload_id=" not in request.query:
            status, body = 200, b""
            session = f"http://{request.headers['host']}{request.path}?upload_id=fake-upload&upload_protocol=resumable"
            headers = [(b"x-goog-upload-url", session.encode()), (b"x-goog-upload-status", b"active")]
        else:
            done = "finalize" in request.headers.get("x-goog-upload-command", "")
            file = {"name": "files/fake", "mimeType": request.headers.get("content-type", ""), "sizeBytes": str(len(request.body)),
                    "uri": "https://files.example.invalid/files/fake", "state": "ACTIVE"}
            status, body = 200, _dump({"file": file}).encode()
            headers = [(b"x-goog-upload-status", b"final" if done else b"active"), (b"content-type", b"application/json")]
        self.sent.append(body)
        await send({"type": "http.response.start", "status": status,
                    "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        self.endings.append(Ending(request, False))

    def _respond(self, method: str, path: str, query: str, body: bytes,
                 gemini: bool = False) -> tuple[int, str, list[bytes]]:
        if self.canned:
            canned = self.canned.pop(0)
            return canned.status, canned.content_type, [canned.body]
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, "application/json", [b'{"object":"list","data":[{"id":"fake-model","object":"model"}]}']
        other = (gemini and GEMINI_ANSWERS.get(f"{method} {path}")) or OTHER_ANSWERS.get(f"{method} {path}")
        if other is not None:
            return 200, "application/json", [_dump(other).encode()]
        request = json.loads(body) if body else {}
        words = [w + " " for w in self.answer.split(" ")]
        words[-1] = words[-1].rstrip()
        if path == "/v1/chat/completions":
            return openai_response(request, words)
        if path == "/v1/responses":
            return responses_response(request, words)
        if path == "/v1/messages":
            return anthropic_response(request, words)
        match = GEMINI_PATH.match(path)
        if match:
            streamed = match["action"] == "streamGenerateContent"
            return gemini_response(match["model"], streamed, words, sse=not streamed or "alt=sse" in query)
        passthrough = PASSTHROUGH_ANSWERS.get(path) or PASSTHROUGH_ANSWERS.get(path.rpartition(":")[2])
        if passthrough is not None:
            return 200, "application/json", [_dump(passthrough).encode()]
        if re.match(r"^/v1/responses/[^/]+$", path):
            return 200, "application/json", [_dump(responses_body(path.rsplit("/", 1)[1], "fake", "stored answer")).encode()]
        return 404, "application/json", [b'{"error":{"message":"no such route"}}']


KEY_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key"})


def missing_key_body(path: str) -> bytes:
    """A provider's answer to a request without its key, in that provider's envelope."""
    if path.startswith("/v1/messages"):
        return _dump({"type": "error", "error": {"type": "authentication_error",
                                                 "message": "x-api-key header is required"}}).encode()
    if GEMINI_PATH.match(path) or path.startswith("/v1beta/"):
        return _dump({"error": {"code": 401, "message": "API key not valid.", "status": "UNAUTHENTICATED"}}).encode()
    return _dump({"error": {"message": "You didn't provide an API key.", "type": "invalid_request_error",
                            "param": None, "code": None}}).encode()


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def openai_response(request: dict[str, Any], words: list[str]) -> tuple[int, str, list[bytes]]:
    model, text = request.get("model", "fake"), "".join(words)
    usage = {"prompt_tokens": 11, "completion_tokens": len(words), "total_tokens": 11 + len(words)}
    head = {"id": "chatcmpl-fake", "created": 1700000000, "model": model}
    if not request.get("stream"):
        message = {"role": "assistant", "content": text, "refusal": None}
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}
        return (
            200,
            "application/json",
            [_dump({**head, "object": "chat.completion", "choices": [choice], "usage": usage}).encode()],
        )
    chunk = {**head, "object": "chat.completion.chunk"}
    deltas = [{"role": "assistant", "content": ""}, *({"content": w} for w in words)]
    chunks = [{**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if (request.get("stream_options") or {}).get("include_usage"):
        chunks.append({**chunk, "choices": [], "usage": usage})
    return 200, "text/event-stream", [f"data: {_dump(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def anthropic_response(request: dict[str, Any], words: list[str]) -> tuple[int, str, list[bytes]]:
    model, text = request.get("model", "fake"), "".join(words)
    message = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "stop_sequence": None}
    if not request.get("stream"):
        usage = {"input_tokens": 11, "output_tokens": len(words)}
        body = {**message, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "usage": usage}
        return 200, "application/json", [_dump(body).encode()]
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 11, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        ("ping", {"type": "ping"}),
        *(
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}},
            )
            for w in words
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": len(words)},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return 200, "text/event-stream", [f"event: {name}\ndata: {_dump(data)}\n\n".encode() for name, data in events]


def responses_body(response_id: str, model: str, text: str, words: int = 1) -> dict[str, Any]:
    message = {
        "type": "message",
        "id": "msg_fake",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": model,
        "output": [message],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {"input_tokens": 11, "output_tokens": words, "total_tokens": 11 + words},
    }


def responses_response(request: dict[str, Any], words: list[str]) -> tuple[int, str, list[bytes]]:
    model, text = request.get("model", "fake"), "".join(words)
    final = responses_body("resp_fake", model, text, len(words))
    if not request.get("stream"):
        return 200, "application/json", [_dump(final).encode()]
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**final["output"][0], "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            "item_id": "msg_fake",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_fake",
                "output_index": 0,
                "content_index": 0,
                "delta": w,
                "logprobs": [],
            }
            for w in words
        ),
        {
            "type": "response.output_text.done",
            "item_id": "msg_fake",
            "output_index": 0,
            "content_index": 0,
            "text": text,
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": final["output"][0]},
        {"type": "response.completed", "response": final},
    ]
    return (
        200,
        "text/event-stream",
        [
            f"event: {e['type']}\ndata: {_dump({**e, 'sequence_number': i})}\n\n".encode()
            for i, e in enumerate(events)
        ],
    )


def gemini_response(model: str, stream: bool, words: list[str], sse: bool = True) -> tuple[int, str, list[bytes]]:
    usage = {"promptTokenCount": 11, "candidatesTokenCount": len(words), "totalTokenCount": 11 + len(words)}

    def candidate(text: str, last: bool) -> dict[str, Any]:
        found: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
        return {**found, "finishReason": "STOP"} if last else found

    if not stream:
        body = {"candidates": [candidate("".join(words), True)], "usageMetadata": usage, "modelVersion": model}
        return 200, "application/json", [_dump(body).encode()]
    chunks = [
        {
            "candidates": [candidate(w, i == len(words) - 1)],
            "modelVersion": model,
            **({"usageMetadata": usage} if i == len(words) - 1 else {}),
        }
        for i, w in enumerate(words)
    ]
    if not sse:  # without alt=sse the chunks come as one JSON array, sent piece by piece
        pieces = [("[" if i == 0 else ",") + _dump(c) for i, c in enumerate(chunks)]
        return 200, "application/json", [p.encode() for p in pieces] + [b"]"]
    return 200, "text/event-stream", [f"data: {_dump(c)}\r\n\r\n".encode() for c in chunks]


class LoopCapture:
    """Remembers the server's event loop so tests can run core calls on it, and the memory key of
    every request whose handling ended (so a test can wait until the server has decided)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop: asyncio.AbstractEventLoop | None = None
        self.served: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.loop = asyncio.get_running_loop()
        try:
            await self.app(scope, receive, send)
        finally:
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                self.served.append(headers.get(b"x-memory-key", b"").decode("latin-1"))


class ServerThread:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port, in a daemon thread."""

    def __init__(self, app: Any, keep_alive_seconds: int = 5) -> None:
        """``keep_alive_seconds``: how long an idle connection is kept (uvicorn's default 5 s)."""
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        # As `memvault serve` runs it: the app dates its own responses, relayed ones keep upstream's.
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", access_log=False, server_header=False, date_header=False,
            timeout_keep_alive=keep_alive_seconds,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()

"""A fake OpenAI + Anthropic + Gemini upstream for tests and the latency bench.

It answers each API in its own shape (whole bodies and streams), records every request it
received, and keeps the exact bytes it sent so tests can prove the relay changed nothing.
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
from typing import Any

import uvicorn

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
GEMINI_PATH = re.compile(r"^/v1(beta)?/models/(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent)$")


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


@dataclass
class Canned:
    status: int
    body: bytes
    content_type: str = "application/json"


@dataclass
class FakeUpstream:
    answer: str = "Noted, thank you."
    received: list[Received] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    canned: list[Canned] = field(default_factory=list)
    chunk_delay: float = 0.0  # seconds between body chunks, to show chunks are relayed as they come

    def reply_next_with(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.canned.append(Canned(status, body, content_type))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = scope["query_string"].decode()
        self.received.append(Received(scope["method"], scope["path"], query, headers, body))
        status, content_type, chunks = self._respond(scope["method"], scope["path"], query, body)
        self.sent.append(b"".join(chunks))
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type.encode())]}
        )
        for index, chunk in enumerate(chunks):
            if index and self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def _respond(self, method: str, path: str, query: str, body: bytes) -> tuple[int, str, list[bytes]]:
        if self.canned:
            canned = self.canned.pop(0)
            return canned.status, canned.content_type, [canned.body]
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return 200, "application/json", [b'{"object":"list","data":[{"id":"fake-model","object":"model"}]}']
        request = json.loads(body) if body else {}
        words = [w + " " for w in self.answer.split(" ")]
        words[-1] = words[-1].rstrip()
        if path == "/v1/chat/completions":
            return openai_response(request, words)
        if path == "/v1/messages":
            return anthropic_response(request, words)
        match = GEMINI_PATH.match(path)
        if match:
            return gemini_response(match["model"], match["action"] == "streamGenerateContent", words)
        return 404, "application/json", [b'{"error":{"message":"no such route"}}']


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


def gemini_response(model: str, stream: bool, words: list[str]) -> tuple[int, str, list[bytes]]:
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
    return 200, "text/event-stream", [f"data: {_dump(c)}\r\n\r\n".encode() for c in chunks]


class ServerThread:
    """Serve an ASGI app with uvicorn on a free 127.0.0.1 port, in a daemon thread."""

    def __init__(self, app: Any) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
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

#!/usr/bin/env python3
"""Races and crashes against the real local server: many concurrent clients on one key and on
several (stores, searches, routed calls whole and streamed through the official SDKs of OpenAI
chat completions and Responses, Anthropic messages and Gemini generateContent, clients that hang
up mid-stream, forgets of ids just returned, clears of session vaults, a key revoked while its
calls are in flight, brain writes to one source at once, usage and receipt reads), with SIGKILLs at moments chosen by events (after the Nth answer, mid-stream, during a big
store), a restart on the same data folder after each, and checks of invariants, not timings:

- every answer is a 2xx or a documented 4xx/429/503 in the caller's format (a provider route's in
  that provider's own error envelope), none hangs;
- a forgotten or cleared message never comes back: not in a search, an injection the provider
  received, a receipt's view, an export, or the mirror (checked while writes go on and after);
- a revoked key is refused from the moment its revocation is answered;
- every acknowledged store and every routed turn whose answer reached its client survives a
  crash; a big store is wholly there or not at all; usage is never double counted;
- concurrent brain writes to one source leave exactly one current fact.

Usage: scripts/soak_races.py [--seconds N] [--seed S]. The suite runs a short version
(tests/api/test_races_and_crashes.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2  # the openai and anthropic SDKs' own HTTP client
import openai
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "api" / "providers"))

from fake_upstream import FakeUpstream, Received, ServerThread  # noqa: E402

MEMVAULT = Path(sys.executable).with_name("memvault")
ADMIN = "r" * 24 + "-admin-token-for-races"
SCOPE = "family"
# What memvault's own routes and the router may answer besides 2xx (docs/api.md, docs/limits.md).
DOCUMENTED = {400, 401, 403, 404, 408, 409, 413, 422, 429, 503}
TOKEN = re.compile(r"zq[0-9a-f]{10}")
REQUEST_SECONDS = 60.0
IDLE_SOCKETS = 40
BIG_STORE = 2000
IDLE_SERVER_SECONDS = 3
CLIENT_LIMITS = httpx.Limits(keepalive_expiry=IDLE_SERVER_SECONDS / 3)


# The routed APIs the mix calls, each through its official SDK, and whose error envelope each answers in.
ROUTES = ("chat", "responses", "anthropic", "gemini")
ENVELOPES = {"chat": "openai", "responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}
# Paths and bodies of a stream the provider holds, for the kill mid-stream.
HELD_STREAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"model": "gpt-test", "stream": True,
                                      "messages": [{"role": "user", "content": "a held story"}]}),
    "responses": ("/v1/responses", {"model": "gpt-test", "stream": True, "input": "a held story"}),
    "anthropic": ("/v1/messages", {"model": "claude-test", "max_tokens": 64, "stream": True,
                                   "messages": [{"role": "user", "content": "a held story"}]}),
    "gemini": ("/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
               {"contents": [{"role": "user", "parts": [{"text": "a held story"}]}]}),
}


def in_envelope(envelope: str, status: int, body: bytes) -> bool:
    """Whether ``body`` is an error in ``envelope``: memvault's own ({"error": {"code", "message"}}),
    OpenAI's, Anthropic's or Gemini's, as each provider's SDK reads it."""
    try:
        shape = json.loads(body)
    except ValueError:
        return False
    error = shape.get("error") if isinstance(shape, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return False
    if envelope == "anthropic":
        return shape.get("type") == "error" and isinstance(error.get("type"), str)
    if envelope == "gemini":
        return error.get("code") == status and isinstance(error.get("status"), str)
    if envelope == "openai":
        return isinstance(error.get("type"), str)
    return "code" in error


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Message:
    key: str
    session: str | None
    token: str
    sent: float
    acked: float


@dataclass
class Clear:
    key: str
    session: str | None
    sent: float
    acked: float | None = None
    cut: bool = False  # cut off by a kill: it may have run


def surely_stored_turns(ledger: Ledger, key: str) -> int:
    """The key's answered routed turns whose two messages its usage must count as stored: none of
    them was asked to be forgotten, and no clear that could reach it was sent after its call (a
    forget or a clear that reaches a turn before it is stored keeps it from ever being stored)."""
    count = 0
    for receipt, (turn_key, session, token) in ledger.turns.items():
        if turn_key != key or any(f"rt-{receipt}-{part}" in ledger.messages for part in "ua"):
            continue
        sent = ledger.call_sent.get(token, 0.0)
        if any(c.key == key and c.session in (None, session) and c.sent >= sent for c in ledger.clears):
            continue
        count += 1
    return count


@dataclass
class Ledger:
    """What the server acknowledged, as the clients saw it (times are this process's monotonic)."""

    messages: dict[str, Message] = field(default_factory=dict)
    # id -> when its forget (or the clear that took it) was answered
    forgotten: dict[str, float] = field(default_factory=dict)
    # ids whose fate a race or a crash left open: a forget cut off, a store beside a clear
    uncertain: set[str] = field(default_factory=set)
    clears: list[Clear] = field(default_factory=list)
    # routed calls whose whole answer reached the client: receipt id -> (key, session, token)
    turns: dict[str, tuple[str, str | None, str]] = field(default_factory=dict)
    turn_routes: dict[str, str] = field(default_factory=dict)  # receipt id -> the route that answered it
    turn_answered: dict[str, float] = field(default_factory=dict)  # receipt id -> when its answer was whole
    routed_sent: dict[str, int] = field(default_factory=Counter)
    routed_answered: dict[str, int] = field(default_factory=Counter)
    stored_sent: dict[str, int] = field(default_factory=Counter)
    stored_answered: dict[str, int] = field(default_factory=Counter)
    # routed calls: token -> when it was sent, to judge what the provider received
    call_sent: dict[str, float] = field(default_factory=dict)
    revoked: dict[str, float] = field(default_factory=dict)  # key -> when its revocation was answered
    statuses: Counter[str] = field(default_factory=Counter)
    checks: Counter[str] = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    answers: int = 0
    rounds: int = 0
    last_kill: float = 0.0

    def violation(self, text: str) -> None:
        if len(self.violations) < 200:
            self.violations.append(text)

    def gone_before(self, moment: float) -> dict[str, str]:
        """token -> id of every message forgotten (or cleared) before ``moment``."""
        return {self.messages[i].token: i for i, at in self.forgotten.items() if at < moment and i in self.messages}


def new_token(rng: random.Random) -> str:
    return f"zq{rng.getrandbits(40):010x}"


class Server:
    """`memvault serve` on one data folder, started and killed as the run needs."""

    def __init__(self, data_dir: Path, upstream_url: str, log: Path) -> None:
        self.data_dir, self.log = data_dir, log
        self.env = {**os.environ, "MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "hash",
                    "MEMVAULT_ADMIN_TOKEN": ADMIN, "MEMVAULT_OPENAI_BASE_URL": upstream_url,
                    "MEMVAULT_ANTHROPIC_BASE_URL": upstream_url, "MEMVAULT_GEMINI_BASE_URL": upstream_url,
                    "MEMVAULT_LOG_LEVEL": "warning",
                    "MEMVAULT_IDLE_CONNECTION_SECONDS": str(IDLE_SERVER_SECONDS)}
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.starts = 0

    def start(self) -> str:
        port = free_port()
        with self.log.open("ab") as sink:
            self.process = subprocess.Popen([str(MEMVAULT), "serve", "--host", "127.0.0.1", "--port", str(port)],
                                            env=self.env, stdout=sink, stderr=sink)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    self.starts += 1
                    return self.url
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"the server did not start: {self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.05)

    def kill(self) -> float:
        """SIGKILL; when it was sent."""
        killed = time.monotonic()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
        return killed

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


class Mix:
    """One round of concurrent clients against a running server."""

    def __init__(self, url: str, keys: list[str], ledger: Ledger, upstream: FakeUpstream, rng: random.Random,
                 doomed: str | None = None, brain_key: str | None = None) -> None:
        self.url, self.keys, self.ledger, self.upstream, self.rng = url, keys, ledger, upstream, rng
        self.doomed, self.brain_key = doomed, brain_key
        self.stop = asyncio.Event()
        # A client lets a pooled connection go before the server would close it for being idle:
        # one reused as the server closes it fails for a reason of HTTP/1.1, not of memvault.
        self.http = httpx.AsyncClient(base_url=url, timeout=REQUEST_SECONDS, limits=CLIENT_LIMITS)
        self.sdk = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unset", max_retries=0, timeout=REQUEST_SECONDS,
                                      http_client=openai.DefaultAsyncHttpxClient(
                                          limits=httpx2.Limits(keepalive_expiry=CLIENT_LIMITS.keepalive_expiry)))
        self.claude = anthropic.AsyncAnthropic(
            base_url=url, api_key="unset", max_retries=0, timeout=REQUEST_SECONDS,
            http_client=anthropic.DefaultAsyncHttpxClient(
                limits=httpx2.Limits(keepalive_expiry=CLIENT_LIMITS.keepalive_expiry)))
        # google-genai takes its API key per client: one for each key and session. Given an httpx
        # client it uses that (with the same idle limit) instead of aiohttp, and retries nothing.
        self.gemini_http = httpx.AsyncClient(timeout=REQUEST_SECONDS, limits=CLIENT_LIMITS)
        self.geminis: dict[tuple[str, str | None], genai.Client] = {}
        self.gone = False  # the server was killed: transport errors are expected from now on

    def status(self, route: str, status: int, body: bytes, key: str, sent: float, envelope: str = "memvault") -> bool:
        """Judge one answer (an error in ``envelope``'s shape); True for a 2xx."""
        ledger = self.ledger
        ledger.answers += 1
        ledger.statuses[f"{route} {status}"] += 1
        revoked_at = ledger.revoked.get(key)
        if revoked_at is not None and sent > revoked_at and 200 <= status < 300:
            ledger.violation(f"{route}: a key revoked before the call was sent answered {status}")
        if 200 <= status < 300:
            return True
        if status not in DOCUMENTED:
            ledger.violation(f"{route}: answered {status}: {body[:300]!r}")
        elif not in_envelope(envelope, status, body):
            ledger.violation(f"{route}: {status} not in {envelope}'s error envelope: {body[:300]!r}")
        return False

    async def guarded(self, route: str, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        # A stream cut off while an SDK reads it raises its HTTP client's error, not the SDK's.
        except (httpx.TransportError, httpx2.TransportError, openai.APIConnectionError,
                anthropic.APIConnectionError) as failure:
            if not self.gone:
                timeouts = (httpx.TimeoutException, httpx2.TimeoutException, openai.APITimeoutError,
                            anthropic.APITimeoutError)
                kind = "hang" if isinstance(failure, timeouts) else "transport"
                self.ledger.violation(f"{route}: {kind} error while the server was up: {failure!r}")

    def vault(self, key: str) -> str | None:
        return self.rng.choice([None, None, "s1", "s2"])

    async def store(self, key: str) -> None:
        session = self.vault(key)
        batch = [(f"m-{token}", token) for token in (new_token(self.rng) for _ in range(self.rng.randint(1, 6)))]
        body = {"messages": [{"role": "user", "id": i, "content": f"note {t}: the lamp by pier {self.rng.randrange(99)} is lit"}
                             for i, t in batch]}
        headers = {"Authorization": f"Bearer {key}", **({"X-Session-ID": session} if session else {})}
        sent = time.monotonic()
        self.ledger.stored_sent[key] += len(batch)
        answer = await self.http.post("/v1/memory", json=body, headers=headers)
        if not self.status("store", answer.status_code, answer.content, key, sent):
            return
        acked = time.monotonic()
        ids = answer.json().get("message_ids")
        if ids != [i for i, _ in batch]:
            self.ledger.violation(f"store answered ids {ids} for {[i for i, _ in batch]}")
        self.ledger.stored_answered[key] += len(batch)
        for message_id, token in batch:
            self.ledger.messages[message_id] = Message(key, session, token, sent, acked)
            if any(c.key == key and (c.session is None or c.session == session) and c.sent < acked
                   and (c.acked is None or c.acked > sent) for c in self.ledger.clears):
                self.ledger.uncertain.add(message_id)

    def pick(self, key: str) -> tuple[str, Message] | None:
        mine = [(i, m) for i, m in self.ledger.messages.items() if m.key == key]
        return self.rng.choice(mine[-50:]) if mine else None

    async def search(self, key: str) -> None:
        picked = self.pick(key)
        if picked is None:
            return
        message = picked[1]
        body: dict[str, Any] = {"query": f"note {message.token}", "limit": 8}
        if message.session:
            body["session_id"] = message.session
        sent = time.monotonic()
        answer = await self.http.post("/v1/memory/search", json=body, headers={"X-Memory-Key": key})
        if not self.status("search", answer.status_code, answer.content, key, sent):
            return
        self.ledger.checks["searches judged"] += 1
        gone = self.ledger.gone_before(sent)
        for item in answer.json()["items"]:
            for token in TOKEN.findall(item["text"]):
                if token in gone and gone[token] not in self.ledger.uncertain:
                    self.ledger.violation(f"search returned {gone[token]}, forgotten before it was sent")
        receipt = answer.json().get("receipt")
        if receipt and self.rng.random() < 0.3:
            await self.receipt(key, receipt)

    async def receipt(self, key: str, receipt_id: str) -> None:
        sent = time.monotonic()
        answer = await self.http.get(f"/v1/memory/receipts/{receipt_id}", headers={"X-Memory-Key": key})
        if not self.status("receipt", answer.status_code, answer.content, key, sent):
            return
        self.ledger.checks["receipts judged"] += 1
        for memory in answer.json()["memories"]:
            if memory["kind"] != "message" or memory["state"] != "kept":
                continue
            at = self.ledger.forgotten.get(memory["id"])
            if at is not None and at < sent and memory["id"] not in self.ledger.uncertain:
                self.ledger.violation(f"receipt {receipt_id} shows {memory['id']} kept, forgotten before the read")

    async def forget(self, key: str) -> None:
        picked = self.pick(key)
        if picked is None:
            return
        message_id, message = picked
        self.ledger.uncertain.add(message_id)
        sent = time.monotonic()
        answer = await self.http.delete(f"/v1/memory/{message_id}", headers={"X-Memory-Key": key})
        if self.status("forget", answer.status_code, answer.content, key, sent):
            self.ledger.forgotten[message_id] = time.monotonic()
            if message_id in answer.json()["forgotten"] and message.acked <= sent:
                self.ledger.uncertain.discard(message_id)

    async def clear_session(self, key: str) -> None:
        session = self.rng.choice(["s1", "s2"])
        clear = Clear(key, session, time.monotonic())
        self.ledger.clears.append(clear)
        try:
            answer = await self.http.delete("/v1/memory", params={"session_id": session},
                                            headers={"X-Memory-Key": key})
        except httpx.TransportError:
            # Cut off by a kill: the clear may have run. What its vault held may be gone or not.
            clear.cut = True
            self.ledger.uncertain.update(i for i, m in self.ledger.messages.items() if m.key == key and m.session == session)
            raise
        if not self.status("clear", answer.status_code, answer.content, key, clear.sent):
            return
        clear.acked = time.monotonic()
        # A routed turn is in the journal before its answer ends: one answered before the clear
        # was sent is cleared with the rest, whenever its store runs.
        for receipt, (turn_key, turn_session, token) in self.ledger.turns.items():
            if turn_key == key and turn_session == session:
                answered = self.ledger.turn_answered[receipt]
                self.ledger.checks["turns answered before a clear"] += answered < clear.sent
                for turn_id in (f"rt-{receipt}-u", f"rt-{receipt}-a"):
                    self.ledger.messages.setdefault(turn_id, Message(key, session, token, answered, answered))
        for message_id, message in self.ledger.messages.items():
            if message.key == key and message.session == session and message_id not in self.ledger.forgotten:
                if message.acked < clear.sent:
                    self.ledger.forgotten[message_id] = clear.acked
                else:
                    self.ledger.uncertain.add(message_id)

    async def routed(self, key: str) -> None:
        """A routed call through one of the four APIs' official SDKs, whole or streamed; some
        streams are left after their first event."""
        token = new_token(self.rng)
        picked = self.pick(key)
        recall = f" Do you remember note {picked[1].token.upper()}?" if picked else ""
        session = self.rng.choice([None, None, "s1"])
        route = self.rng.choice(ROUTES)
        streamed = self.rng.random() < 0.5
        leave = streamed and self.rng.random() < 0.25
        ask = f"call {token}: where is the lamp?{recall}"
        name = f"{route}{' left' if leave else ' streamed' if streamed else ''}"
        sent = time.monotonic()
        self.ledger.call_sent[token] = sent
        self.ledger.routed_sent[key] += 1
        call = {"chat": self.chat, "responses": self.responses, "anthropic": self.anthropic,
                "gemini": self.gemini}[route]
        try:
            receipt = await call(key, session, ask, streamed, leave)
        except (openai.APIStatusError, anthropic.APIStatusError) as refused:
            self.status(name, refused.status_code, refused.response.content, key, sent, ENVELOPES[route])
            return
        except genai_errors.APIError as refused:
            body = refused.response.content if isinstance(refused.response, httpx.Response) else b""
            self.status(name, refused.code, body, key, sent, ENVELOPES[route])
            return
        self.status(name, 200, b"", key, sent)
        if leave:
            return
        self.ledger.routed_answered[key] += 1
        if receipt:
            self.ledger.turns[receipt] = (key, session, token)
            self.ledger.turn_routes[receipt] = name
            self.ledger.turn_answered[receipt] = time.monotonic()
            self.ledger.checks[f"{route} turns answered"] += 1
            if self.rng.random() < 0.15:  # forget the turn while it may still be in the journal
                ids = [f"rt-{receipt}-u", f"rt-{receipt}-a"]
                for i in ids:
                    self.ledger.messages[i] = Message(key, session, token, sent, time.monotonic())
                    self.ledger.uncertain.add(i)
                asked = time.monotonic()
                forgot = await self.http.post("/v1/memory/forget", json={"ids": ids}, headers={"X-Memory-Key": key})
                if self.status("forget turn", forgot.status_code, forgot.content, key, asked):
                    for i in ids:
                        self.ledger.forgotten[i] = time.monotonic()
                        self.ledger.uncertain.discard(i)

    async def chat(self, key: str, session: str | None, ask: str, streamed: bool, leave: bool) -> str | None:
        """OpenAI chat completions; the call's receipt."""
        client = self.sdk.with_options(api_key=key, default_headers={"X-Session-ID": session} if session else {})
        messages: Any = [{"role": "user", "content": ask}]
        if not streamed:
            raw = await client.chat.completions.with_raw_response.create(model="gpt-test", messages=messages)
            raw.parse()
            return raw.headers.get("x-memory-receipt")
        async with client.chat.completions.with_streaming_response.create(
                model="gpt-test", messages=messages, stream=True, stream_options={"include_usage": True}) as response:
            async for _ in await response.parse():
                if leave:
                    break
            return response.headers.get("x-memory-receipt")

    async def responses(self, key: str, session: str | None, ask: str, streamed: bool, leave: bool) -> str | None:
        """OpenAI Responses, its input a string or a message item."""
        client = self.sdk.with_options(api_key=key, default_headers={"X-Session-ID": session} if session else {})
        given: Any = ask if self.rng.random() < 0.5 else [{"role": "user", "content": [{"type": "input_text", "text": ask}]}]
        if not streamed:
            raw = await client.responses.with_raw_response.create(model="gpt-test", input=given)
            raw.parse()
            return raw.headers.get("x-memory-receipt")
        async with client.responses.with_streaming_response.create(model="gpt-test", input=given,
                                                                   stream=True) as response:
            async for _ in await response.parse():
                if leave:
                    break
            return response.headers.get("x-memory-receipt")

    async def anthropic(self, key: str, session: str | None, ask: str, streamed: bool, leave: bool) -> str | None:
        """Anthropic messages, the memory key as the SDK's API key (`x-api-key`)."""
        client = self.claude.with_options(api_key=key, default_headers={"X-Session-ID": session} if session else {})
        messages: Any = [{"role": "user", "content": ask}]
        if not streamed:
            raw = await client.messages.with_raw_response.create(model="claude-test", max_tokens=64, messages=messages)
            await raw.parse()
            return raw.headers.get("x-memory-receipt")
        async with client.messages.with_streaming_response.create(model="claude-test", max_tokens=64,
                                                                  messages=messages, stream=True) as response:
            async for _ in await response.parse():
                if leave:
                    break
            return response.headers.get("x-memory-receipt")

    async def gemini(self, key: str, session: str | None, ask: str, streamed: bool, leave: bool) -> str | None:
        """Gemini generateContent, the memory key as the SDK's API key (`x-goog-api-key`)."""
        client = self.geminis.get((key, session))
        if client is None:
            options = genai_types.HttpOptions(base_url=self.url, headers={"X-Session-ID": session} if session else {},
                                              httpx_async_client=self.gemini_http)
            client = self.geminis[key, session] = genai.Client(api_key=key, http_options=options)
        contents: Any = [{"role": "user", "parts": [{"text": ask}]}]
        if not streamed:
            answer = await client.aio.models.generate_content(model="gemini-test", contents=contents)
            return header_of(answer.sdk_http_response, "x-memory-receipt")
        stream = await client.aio.models.generate_content_stream(model="gemini-test", contents=contents)
        receipt = None
        try:
            async for chunk in stream:
                receipt = receipt or header_of(chunk.sdk_http_response, "x-memory-receipt")
                if leave:
                    break
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        return receipt

    async def hang_up(self, key: str) -> None:
        body = {"model": "gpt-test", "stream": True, "messages": [{"role": "user", "content": "tell me a long story"}]}
        sent = time.monotonic()
        self.ledger.routed_sent[key] += 1
        async with self.http.stream("POST", "/v1/chat/completions", json=body,
                                    headers={"Authorization": f"Bearer {key}"}) as answer:
            refusal = b"" if answer.is_success else await answer.aread()
            if self.status("hang-up", answer.status_code, refusal, key, sent, "openai"):
                async for _ in answer.aiter_lines():
                    break  # and leave mid-stream

    async def huge(self, key: str) -> None:
        """A store over the body limit (1 MB by default): refused whole, in the error envelope."""
        token = new_token(self.rng)
        body = {"messages": [{"role": "user", "id": f"huge-{token}", "content": f"huge {token} " + "lamp " * 260_000}]}
        sent = time.monotonic()
        answer = await self.http.post("/v1/memory", json=body, headers={"X-Memory-Key": key})
        if self.status("huge store", answer.status_code, answer.content, key, sent):
            self.ledger.violation("a store over the body limit was taken")
        elif answer.status_code not in (401, 413):
            self.ledger.violation(f"a store over the body limit answered {answer.status_code}")

    async def usage(self, key: str) -> None:
        sent = time.monotonic()
        answer = await self.http.get("/v1/usage", headers={"X-Memory-Key": key})
        self.status("usage", answer.status_code, answer.content, key, sent)

    async def client(self, number: int) -> None:
        actions: list[tuple[float, Callable[[str], Awaitable[None]]]] = [
            (0.30, self.store), (0.20, self.search), (0.20, self.routed), (0.10, self.forget),
            (0.04, self.hang_up), (0.03, self.clear_session), (0.05, self.usage), (0.01, self.huge),
        ]
        weights = [w for w, _ in actions]
        while not self.stop.is_set():
            key = self.doomed if self.doomed and number == 0 else self.rng.choice(self.keys)
            action = self.rng.choices([a for _, a in actions], weights)[0]
            await self.guarded(action.__name__, lambda action=action, key=key: action(key))  # type: ignore[misc]
            if self.gone:
                return

    async def revoke_when(self, admin: httpx.AsyncClient, key_id: str, after_answers: int) -> None:
        while self.ledger.answers < after_answers and not self.stop.is_set():
            await asyncio.sleep(0.01)
        doomed = self.doomed
        assert doomed is not None
        answer = await admin.delete(f"/v1/admin/keys/{key_id}")
        if answer.status_code != 200:
            self.ledger.violation(f"revoking a key answered {answer.status_code}")
            return
        self.ledger.revoked[doomed] = time.monotonic()
        probe = await self.http.post("/v1/memory/search", json={"query": "x"}, headers={"X-Memory-Key": doomed})
        self.ledger.checks["revocations judged"] += 1
        self.status("search after revoke", probe.status_code, probe.content, doomed, time.monotonic())

    async def brain_race(self, writers: int) -> None:
        """Writers reconcile one source to a fact each, at once, and others send one fact at once:
        the source keeps exactly one current fact, and the same fact is stored once."""
        assert self.brain_key is not None
        key = self.brain_key
        source = f"races/{new_token(self.rng)}.md"
        headers = {"Authorization": f"Bearer {key}"}
        same = f"The harbour gate code changed to {new_token(self.rng)}."
        written: list[list[str]] = []

        async def write(body: dict[str, Any], route: str) -> None:
            answer = await self.http.post("/v1/brain/facts", json=body, headers=headers)
            if self.status(route, answer.status_code, answer.content, key, time.monotonic()) and route == "brain same":
                written.append(answer.json()["ids"])

        bodies = [({"facts": [{"content": f"The pier lamp is lit by keeper {n} {new_token(self.rng)}."}],
                    "source": source, "scope": SCOPE, "reconcile": True}, "brain reconcile") for n in range(writers)]
        bodies += [({"content": same, "source": f"{source}-same", "scope": SCOPE}, "brain same")] * writers
        await asyncio.gather(*(self.guarded(route, lambda b=body, r=route: write(b, r))  # type: ignore[misc]
                               for body, route in bodies))
        if self.gone:
            return
        exported = await self.http.get("/v1/brain/export", params={"source_prefix": source}, headers=headers)
        if exported.status_code != 200:
            self.ledger.violation(f"brain export answered {exported.status_code}")
            return
        rows = [json.loads(line) for line in exported.text.splitlines() if line.strip()]
        current = [r["content"] for r in rows if r["current"] and r["source"] == source]
        same_rows = [r["id"] for r in rows if r["source"] == f"{source}-same"]
        self.ledger.checks["brain races judged"] += 1
        if len(current) != 1:
            self.ledger.violation(f"{writers} reconciles of one source left {len(current)} current facts: {current}")
        if len(same_rows) != 1 or any(ids != same_rows for ids in written):
            self.ledger.violation(f"one fact sent {writers} times at once is stored as {same_rows}, answered {written}")


def header_of(response: genai_types.HttpResponse | None, name: str) -> str | None:
    headers = (response.headers if response is not None else None) or {}
    return next((v for k, v in headers.items() if k.lower() == name), None)


def call_of(request: Received) -> str | None:
    """The token of the routed call a provider request carries: its last message's, in whichever
    API's shape (memory injected before it names other calls)."""
    try:
        body = json.loads(request.body)
        if "contents" in body:
            last: Any = body["contents"][-1]["parts"][-1]["text"]
        elif "input" in body:
            last = body["input"] if isinstance(body["input"], str) else body["input"][-1]["content"][-1]["text"]
        else:
            last = body["messages"][-1]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    call = re.match(r"call (zq[0-9a-f]{10})", last) if isinstance(last, str) else None
    return call.group(1) if call else None


def judge_injections(ledger: Ledger, received: list[Received]) -> None:
    """No provider request carries a message forgotten before its call was sent."""
    for request in list(received):
        text = request.body.decode(errors="replace")
        call = call_of(request)
        if call is None or call not in ledger.call_sent:
            continue
        gone = ledger.gone_before(ledger.call_sent[call])
        ledger.checks["injections judged"] += 1
        for token in set(TOKEN.findall(text)) - {call}:
            if token in gone and gone[token] not in ledger.uncertain:
                ledger.violation(f"a routed call sent after {gone[token]} was forgotten injected it")


async def create_keys(url: str, count: int) -> tuple[list[tuple[str, str]], str]:
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60) as admin:
        made = []
        for n in range(count):
            answer = (await admin.post("/v1/admin/keys", json={"label": f"races-{n}"})).json()
            made.append((answer["id"], answer["key"]))
        brain = (await admin.post("/v1/admin/keys", json={"label": "races-brain", "brain_scopes": [SCOPE],
                                                         "brain_writer": True})).json()
        return made, brain["key"]


async def run_round(server: Server, keys: list[str], ledger: Ledger, upstream: FakeUpstream, rng: random.Random,
                    clients: int, answers: int, crash: str | None, doomed: tuple[str, str] | None,
                    brain_key: str) -> None:
    """Run the mix until ``answers`` more answers came back, then stop it (gently) or kill the server
    (``crash``: "answers", "stream" or "big store")."""
    mix = Mix(server.url, keys, ledger, upstream, rng, doomed[1] if doomed else None, brain_key)
    target = ledger.answers + answers
    big_ids: list[str] = []
    async with httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN}"},
                                 timeout=REQUEST_SECONDS) as admin:
        # Connections that never send a request, held through the round: the others are served all the same.
        idle = [socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1]))) for _ in range(IDLE_SOCKETS)]
        tasks = [asyncio.create_task(mix.client(n)) for n in range(clients)]
        if doomed:
            tasks.append(asyncio.create_task(mix.revoke_when(admin, doomed[0], ledger.answers + answers // 3)))
        tasks.append(asyncio.create_task(mix.guarded("brain", lambda: mix.brain_race(4))))
        while ledger.answers < target:
            await asyncio.sleep(0.02)
        if crash == "big store":
            big_ids = await big_store_killed(mix, server, keys[0], ledger)
        elif crash == "stream":
            await stream_killed(mix, server, keys[0], upstream)
        elif crash == "answers":
            mix.gone = True
            ledger.last_kill = server.kill()
        mix.stop.set()
        await asyncio.gather(*tasks)
        for sock in idle:
            sock.close()
    await mix.http.aclose()
    await mix.sdk.close()
    await mix.claude.close()
    await mix.gemini_http.aclose()
    judge_injections(ledger, upstream.received)
    if big_ids:
        await judge_cut_store(server, keys[0], big_ids, ledger)


async def judge_cut_store(server: Server, key: str, ids: list[str], ledger: Ledger) -> None:
    """A store cut by a kill left all its messages or none (docs/memory.md); sending it again
    completes it."""
    ledger.checks["big stores cut by the kill"] += 1
    server.start()
    async with httpx.AsyncClient(base_url=server.url, timeout=REQUEST_SECONDS) as client:
        held = await vault_ids(client, key, None) & set(ids)
        if held and held != set(ids):
            ledger.violation(f"a store cut by a kill left {len(held)} of its {len(ids)} messages, not all or none")
        ledger.stored_sent[key] += len(ids)
        again = await client.post("/v1/memory", json=big_body(ids), headers={"X-Memory-Key": key})
        if again.status_code != 200:
            ledger.violation(f"sending a cut store again answered {again.status_code}")
        else:
            ledger.stored_answered[key] += len(ids) - len(held)
            for i in ids:
                ledger.messages[i] = Message(key, None, i.removeprefix("big-"), 0, time.monotonic())
            ledger.uncertain.difference_update(ids)
    server.stop()


def big_body(ids: list[str]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "id": i, "content": f"archive line {i.removeprefix('big-')} of the harbour log"}
                         for i in ids]}


async def big_store_killed(mix: Mix, server: Server, key: str, ledger: Ledger) -> list[str]:
    """A store of many messages, the server killed after a few more answers to the other clients:
    mostly while it stores, sometimes just after it answered. The ids of the store if it was cut."""
    ids = [f"big-{new_token(mix.rng)}" for _ in range(BIG_STORE)]
    ledger.stored_sent[key] += len(ids)
    task = asyncio.create_task(mix.http.post("/v1/memory", json=big_body(ids), headers={"X-Memory-Key": key}))
    kill_at = ledger.answers + mix.rng.randint(1, 8)
    while ledger.answers < kill_at and not task.done():
        await asyncio.sleep(0.005)
    mix.gone = True
    ledger.last_kill = server.kill()
    try:
        answer = await task
        if answer.status_code == 200:
            ledger.checks["big stores answered before the kill"] += 1
            ledger.stored_answered[key] += len(ids)
            for i in ids:
                ledger.messages[i] = Message(key, None, i.removeprefix("big-"), 0, time.monotonic())
            return []
    except httpx.TransportError:
        pass
    return ids


async def stream_killed(mix: Mix, server: Server, key: str, upstream: FakeUpstream) -> None:
    """A routed stream of one of the APIs the provider holds after its first chunks, the server
    killed mid-stream."""
    upstream.hold_after = 2
    path, body = HELD_STREAMS[mix.rng.choice(ROUTES)]
    try:
        async with mix.http.stream("POST", path, json=body, headers={"X-Memory-Key": key}) as answer:
            mix.ledger.routed_sent[key] += 1
            async for line in answer.aiter_lines():
                if line.startswith("data:"):
                    mix.gone = True
                    mix.ledger.last_kill = server.kill()
                    break
    except httpx.TransportError:
        pass
    finally:
        mix.gone = True
        server.kill()
        upstream.hold_after = None


async def vault_ids(client: httpx.AsyncClient, key: str, session: str | None) -> set[str]:
    held: set[str] = set()
    offset = 0
    while True:
        params: dict[str, Any] = {"limit": 500, "offset": offset, **({"session_id": session} if session else {})}
        answer = await client.get("/v1/memory", params=params, headers={"X-Memory-Key": key})
        answer.raise_for_status()
        items = answer.json()["items"]
        held.update(item["id"] for item in items)
        if len(items) < 500:
            return held
        offset += 500


async def settle_and_judge(server: Server, keys: list[str], ledger: Ledger, crashed: bool) -> None:
    """On a running server after the dust settled: what was acknowledged is there, what was forgotten
    is not, and usage counts each call and store once."""
    async with httpx.AsyncClient(base_url=server.url, timeout=REQUEST_SECONDS) as client:
        for key in keys:
            held: dict[str | None, set[str]] = {s: await vault_ids(client, key, s) for s in (None, "s1", "s2")}
            everywhere = set().union(*held.values())
            for message_id, message in ledger.messages.items():
                if message.key != key or message_id in ledger.uncertain:
                    continue
                ledger.checks["messages judged"] += 1
                if message_id in ledger.forgotten:
                    if message_id in everywhere:
                        ledger.violation(f"{message_id} came back after it was forgotten")
                elif message_id not in held[message.session]:
                    ledger.violation(f"{message_id} was acknowledged and is gone (vault {message.session}, "
                                     f"round {ledger.rounds}, held elsewhere: {message_id in everywhere}, "
                                     f"acknowledged {ledger.last_kill - message.acked:.3f} s before the last kill)")
            for receipt, (turn_key, session, _token) in ledger.turns.items():
                ids = {f"rt-{receipt}-u", f"rt-{receipt}-a"}
                if turn_key != key or ids & (set(ledger.forgotten) | ledger.uncertain):
                    continue
                clears = [c for c in ledger.clears if c.key == key and c.session == session]
                if any(c.acked is not None for c in clears) or key in ledger.revoked:
                    continue
                if any(c.cut for c in clears):
                    ledger.checks["turns a clear cut off by a kill may have taken"] += 1
                    ledger.checks["of them, taken"] += not ids <= held[session]
                    continue
                ledger.checks["routed turns judged"] += 1
                if not ids <= held[session]:
                    ledger.violation(f"the turn of receipt {receipt} answered to its client through "
                                     f"{ledger.turn_routes.get(receipt)} is missing "
                                     f"(session {session}, found {sorted(ids & everywhere)})")
            if key in ledger.revoked:
                continue
            usage = (await client.get("/v1/usage", headers={"X-Memory-Key": key})).json()["total"]
            ledger.checks["usage judged"] += 1
            stored_low = ledger.stored_answered[key] + 2 * surely_stored_turns(ledger, key)
            if not (ledger.routed_answered[key] <= usage["calls"] <= ledger.routed_sent[key]):
                ledger.violation(f"usage counts {usage['calls']} calls; answered {ledger.routed_answered[key]}, "
                                 f"sent {ledger.routed_sent[key]}")
            stored_high = ledger.stored_sent[key] + 2 * (ledger.routed_sent[key])
            if not (stored_low <= usage["messages_stored"] <= stored_high):
                ledger.violation(f"usage counts {usage['messages_stored']} messages stored; between {stored_low} "
                                 f"and {stored_high} were possible")
    if crashed:
        ledger.checks["restarts judged"] += 1


def export_and_mirror(server: Server, keys: list[str], ledger: Ledger) -> None:
    """With the server stopped: `memvault export` holds nothing forgotten, and every vault's mirror
    holds what the vault holds."""
    for key in keys:
        if key in ledger.revoked:
            continue
        exported = subprocess.run([str(MEMVAULT), "export", "--key", key], env=server.env, capture_output=True,
                                  text=True, timeout=300)
        if exported.returncode != 0:
            ledger.violation(f"memvault export failed: {exported.stderr[-500:]}")
            continue
        ledger.checks["exports judged"] += 1
        gone = {m.token: i for i, m in ledger.messages.items() if i in ledger.forgotten and i not in ledger.uncertain}
        for line in exported.stdout.splitlines():
            for token in set(TOKEN.findall(line)) & set(gone):
                ledger.violation(f"export holds {gone[token]}, forgotten: {line[:600]}")
    ledger.checks["mirrors judged"] += mirror_differences(server, ledger)


def mirror_differences(server: Server, ledger: Ledger) -> int:
    from memvault.core import memory
    from memvault.core.settings import load_settings
    from memvault.runtime.local import build_local_deps, close_local_deps

    async def compare() -> int:
        deps = build_local_deps(load_settings(server.env))
        try:
            vaults = await memory.all_vaults(deps)
            for key_id, name in vaults:
                for difference in await memory.mirror_differences(deps, key_id, name):
                    ledger.violation(f"vault {key_id}/{name} and its mirror differ: {difference}")
            return len(vaults)
        finally:
            await close_local_deps(deps)

    return asyncio.run(compare())


@dataclass
class Report:
    seed: int
    rounds: int
    crashes: int
    ledger: Ledger

    def summary(self) -> dict[str, Any]:
        ledger = self.ledger
        return {"seed": self.seed, "rounds": self.rounds, "crashes": self.crashes, "answers": ledger.answers,
                "acknowledged messages": len(ledger.messages), "forgotten": len(ledger.forgotten),
                "routed turns answered": len(ledger.turns), "checks": dict(ledger.checks),
                "statuses": dict(sorted(ledger.statuses.items())), "violations": len(ledger.violations)}


def run(data_dir: Path, seed: int, seconds: float = 0, rounds: int = 0, clients: int = 8, answers: int = 150) -> Report:
    """Rounds of the mix, each ended by a kill at an event or by a stop, each followed by a restart
    and the checks; as many as ``rounds`` or as fit in ``seconds``."""
    rng = random.Random(seed)
    ledger = Ledger()
    upstream = FakeUpstream()

    async def answer_in_kind(request: Received) -> None:
        # Each call's answer names its call, as a model's answers differ: the same text twice would
        # be one memory (docs/memory.md), and the turn's answer could not be told from another's.
        # No await follows, so the answer set here is the one this request gets.
        call = call_of(request)
        upstream.answer = f"The lamp is lit, keeper of {call}." if call else "The lamp is lit."

    upstream.before_answer = answer_in_kind
    log = data_dir / "server.log"
    data = data_dir / "data"
    crashes = done = 0
    started = time.monotonic()
    with ServerThread(upstream) as fake:
        server = Server(data, fake.url, log)
        server.start()
        made, brain_key = asyncio.run(create_keys(server.url, 4))
        keys = [secret for _, secret in made[:3]]
        doomed: tuple[str, str] | None = made[3]
        try:
            while (rounds and done < rounds) or (seconds and time.monotonic() - started < seconds):
                crash = [None, "answers", "stream", "big store"][done % 4]
                asyncio.run(run_round(server, keys, ledger, upstream, rng, clients, answers, crash, doomed, brain_key))
                doomed = None
                crashes += crash is not None
                if crash is None:
                    server.stop()
                if server.process is None or server.process.poll() is not None:
                    server.start()
                asyncio.run(settle_and_judge(server, keys, ledger, crash is not None))
                done += 1
                ledger.rounds = done
            server.stop()
            export_and_mirror(server, keys, ledger)
        finally:
            server.kill()
    printed = log.read_text(errors="replace") if log.exists() else ""
    for line in printed.splitlines():
        if "Traceback" in line or "Exception in ASGI" in line or " ERROR " in line or "ERROR:" in line:
            ledger.violation(f"the server logged: {line[:300]}")
    return Report(seed, done, crashes, ledger)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=random.randrange(10**6))
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    print(f"seed {args.seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="memvault-races-") as scratch:
        report = run(Path(scratch), args.seed, seconds=args.seconds, clients=args.clients)
    print(json.dumps(report.summary(), indent=2))
    for violation in report.ledger.violations:
        print("VIOLATION", violation)
    return 1 if report.ledger.violations else 0


if __name__ == "__main__":
    sys.exit(main())

"""Memory router behaviour over raw HTTP: byte-identical relay, memory options, failure paths."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import Router
from memvault.core.errors import StorageUnavailable

Body = dict[str, Any]
PROVIDERS = ("openai", "anthropic", "gemini")


def path_of(provider: str, stream: bool) -> str:
    if provider == "openai":
        return "/v1/chat/completions"
    if provider == "anthropic":
        return "/v1/messages"
    return "/v1beta/models/gemini-test:" + ("streamGenerateContent?alt=sse" if stream else "generateContent")


def body_of(provider: str, texts: list[str], stream: bool = False, private_last: bool = False) -> Body:
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(len(texts))]
    if provider == "gemini":
        contents: list[Body] = [
            {"role": "model" if r == "assistant" else "user", "parts": [{"text": t}]}
            for r, t in zip(roles, texts, strict=True)
        ]
        if private_last:
            contents[-1]["memory"] = False
        return {"contents": contents, "generationConfig": {"temperature": 0.1}}
    messages: list[Body] = [{"role": r, "content": t} for r, t in zip(roles, texts, strict=True)]
    if private_last:
        messages[-1]["memory"] = False
    body: Body = {"model": "test-model", "messages": messages, "stream": stream}
    return {**body, "max_tokens": 32} if provider == "anthropic" else body


def system_text(provider: str, sent: Body) -> str:
    if provider == "openai":
        first = sent["messages"][0]
        return str(first["content"]) if first["role"] == "system" else ""
    if provider == "anthropic":
        return str(sent.get("system") or "")
    return " ".join(p["text"] for p in (sent.get("systemInstruction") or {}).get("parts", []))


def without_system(provider: str, sent: Body) -> Body:
    if provider == "openai":
        return {**sent, "messages": [m for m in sent["messages"] if m["role"] != "system"]}
    return {k: v for k, v in sent.items() if k not in ("system", "systemInstruction")}


@pytest.fixture
def call(router: Router) -> Iterator[Callable[..., httpx.Response]]:
    with httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client:

        def post(
            provider: str, secret: str | None, body: Body | bytes, stream: bool = False, **headers: str
        ) -> httpx.Response:
            sent = {k.replace("_", "-"): v for k, v in headers.items()}
            if secret is not None:
                sent["X-Memory-Key"] = secret
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent.setdefault("content-type", "application/json")
            served = router.served(secret or "")
            response = client.post(path_of(provider, stream), content=content, headers=sent)
            router.wait_served(secret or "", served + 1)
            return response

        yield post


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_client_gets_upstream_bytes_and_upstream_gets_the_request_unchanged(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str, stream: bool
) -> None:
    _, secret = key
    body = body_of(provider, ["Hello there, nice to meet you."], stream)
    response = call(provider, secret, body, stream)
    assert response.status_code == 200
    assert response.content == router.upstream.sent[-1]
    assert response.headers["content-type"].startswith("text/event-stream" if stream else "application/json")
    assert response.headers["x-memory-status"] == "ok"
    assert {"x-memory-items", "x-memory-tokens", "x-memory-retrieval-ms"} <= set(response.headers)
    assert router.upstream.received[-1].json == body


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_memory_false_is_stripped_before_forwarding_and_never_stored(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str, stream: bool
) -> None:
    key_id, secret = key
    router.upstream.answer = "Your code is PINEAPPLE-SECRET-42."
    try:
        body = body_of(provider, ["Hi", "Hello!", "My door code is PINEAPPLE-SECRET-42."], stream, private_last=True)
        assert call(provider, secret, body, stream).status_code == 200
    finally:
        router.upstream.answer = "Noted, thank you."
    sent = router.upstream.received[-1]
    assert b'"memory"' not in sent.body
    assert sent.json == json.loads(json.dumps(body).replace(', "memory": false', ""))
    call(provider, secret, body_of(provider, ["A later turn."], stream))
    stored = router.wait_stored(key_id, "A later turn.")
    assert not any("PINEAPPLE" in text for text in stored)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_modes_off_read_and_write(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str
) -> None:
    key_id, secret = key
    fact = "I ride a green Brompton bicycle to work."
    call("openai", secret, body_of("openai", [fact]))
    stored = router.wait_stored(key_id, fact)
    question = body_of(provider, ["Which bicycle do I ride to work?"])

    off = call(provider, secret, question, **{"X-Memory-Mode": "off"})
    assert off.headers["x-memory-status"] == "off"
    assert router.upstream.received[-1].json == question

    read = call(provider, secret, question, **{"X-Memory-Mode": "read"})
    assert read.headers["x-memory-status"] == "ok" and int(read.headers["x-memory-items"]) >= 1
    sent = router.upstream.received[-1].json
    assert "Brompton" in system_text(provider, sent)
    assert without_system(provider, sent) == question

    write = call(provider, secret, body_of(provider, ["I also own a tandem."]), **{"X-Memory-Mode": "write"})
    assert write.headers["x-memory-items"] == "0"
    assert system_text(provider, router.upstream.received[-1].json) == ""
    # The write landed after the off and read calls were decided: neither stored the question.
    after = router.wait_stored(key_id, "I also own a tandem.")
    assert set(after) == {*stored, "I also own a tandem.", router.upstream.answer}


def test_store_flags_context_limit_and_sessions(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response]
) -> None:
    key_id, secret = key
    call("anthropic", secret, body_of("anthropic", ["Not to be kept: my tram stop is Graça."]), X_Memory_Store="false")
    call("anthropic", secret, body_of("anthropic", ["My tram is the 28."]), X_Memory_Store_Response="false")
    assert router.wait_stored(key_id, "My tram is the 28.") == ["My tram is the 28."]
    venue = "Session-only: the venue is Coliseu."
    call("gemini", secret, body_of("gemini", [venue]), X_Session_ID="trip-1")
    router.wait_stored(key_id, venue, session_id="trip-1")
    limited = call("anthropic", secret, body_of("anthropic", ["Which tram do I take?"]), X_Memory_Context_Limit="0")
    assert "system" not in router.upstream.received[-1].json and limited.headers["x-memory-items"] == "0"
    assert not any("Coliseu" in text for text in router.wait_stored(key_id, "Which tram do I take?"))


class BrokenDatabase:
    async def query(self, sql: str, params: Any = ()) -> Any:
        raise StorageUnavailable("database down")

    async def execute(self, sql: str, params: Any = ()) -> Any:
        raise StorageUnavailable("database down")

    async def batch(self, statements: Any) -> None:
        raise StorageUnavailable("database down")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_memory_failure_degrades_but_the_call_goes_through(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str
) -> None:
    _, secret = key
    working, router.deps.db = router.deps.db, BrokenDatabase()  # type: ignore[assignment]
    try:
        body = body_of(provider, ["Hello while memory is down."])
        response = call(provider, secret, body)
    finally:
        router.deps.db = working
    assert response.status_code == 200 and response.content == router.upstream.sent[-1]
    assert response.headers["x-memory-status"] == "degraded"
    assert router.upstream.received[-1].json == body


@pytest.mark.parametrize(
    ("provider", "status"), [("openai", 400), ("anthropic", 500), ("gemini", 404), ("openai", 503)]
)
def test_upstream_errors_reach_the_client_as_sent(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str, status: int
) -> None:
    key_id, secret = key
    error = json.dumps({"error": {"message": f"upstream says {status}", "weird": [1, 2]}}, indent=3).encode()
    router.upstream.reply_next_with(status, error)
    response = call(provider, secret, body_of(provider, ["This turn fails upstream."]))
    assert response.status_code == status and response.content == error
    call(provider, secret, body_of(provider, ["This one goes through."]))
    assert router.wait_stored(key_id, "This one goes through.") == ["This one goes through.", router.upstream.answer]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_input_gets_the_providers_own_envelope_and_is_not_forwarded(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str
) -> None:
    key_id, secret = key
    before = len(router.upstream.received)
    cases = [
        (call(provider, secret, b"{not json"), 400),
        (call(provider, secret, {"nothing": "here"}), 400),
        (call(provider, None, body_of(provider, ["hi"])), 401),
        (call(provider, "mk_unknown", body_of(provider, ["hi"])), 401),
        (call(provider, "mk_unknown", b"{not json"), 401),  # the key's verdict comes before the body's
        (call(provider, None, {"nothing": "here"}), 401),
        (call(provider, secret, body_of(provider, ["hi"]), X_Memory_Mode="sometimes"), 400),
    ]
    for response, status in cases:
        assert response.status_code == status
        error = response.json()
        if provider == "anthropic":
            assert error["type"] == "error" and error["error"]["message"]
        elif provider == "gemini":
            assert error["error"]["code"] == status and error["error"]["status"]
        else:
            assert error["error"]["message"] and error["error"]["type"]
    assert len(router.upstream.received) == before
    call(provider, secret, body_of(provider, ["Only this is kept."]))
    assert router.wait_stored(key_id, "Only this is kept.") == ["Only this is kept.", router.upstream.answer]


def test_unreachable_upstream_is_a_502_in_the_providers_envelope(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response]
) -> None:
    _, secret = key
    settings = router.deps.settings
    router.deps.settings = settings.replace(anthropic_base_url="http://127.0.0.1:9")
    try:
        response = call("anthropic", secret, body_of("anthropic", ["hi"]))
    finally:
        router.deps.settings = settings
    assert response.status_code == 502
    assert response.json()["type"] == "error" and response.json()["error"]["type"] == "api_error"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_provider_key_is_forwarded_in_the_native_header_and_never_stored_or_logged(
    router: Router,
    key: tuple[str, str],
    call: Callable[..., httpx.Response],
    provider: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    key_id, secret = key
    provider_key = f"pk-{provider}-DO-NOT-KEEP-9f8e7d"
    caplog.set_level(logging.DEBUG)
    response = call(provider, secret, body_of(provider, ["Keys must not leak."]), X_Provider_Key=provider_key)
    assert response.status_code == 200
    headers = router.upstream.received[-1].headers
    native = {"openai": ("authorization", f"Bearer {provider_key}"), "anthropic": ("x-api-key", provider_key)}
    name, value = native.get(provider, ("x-goog-api-key", provider_key))
    assert headers[name] == value and "x-provider-key" not in headers
    router.wait_stored(key_id, "Keys must not leak.")
    assert provider_key not in caplog.text
    for path in Path(router.data_dir).rglob("*"):
        if path.is_file():
            assert provider_key.encode() not in path.read_bytes(), path.name


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_memory_key_inside_any_header_never_reaches_the_provider(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response], provider: str
) -> None:
    """However the caller wraps its key in a header of its own (a parameter of a value, a Basic
    credential), the header stays behind: the provider is a third party."""
    _, secret = key
    basic = "Basic " + base64.b64encode(f"{secret}:".encode()).decode()
    response = call(provider, secret, body_of(provider, ["Wrapped keys stay home."]),
                    X_Baz=f"token={secret}", X_Bar=basic, X_Kept="plain value")
    assert response.status_code == 200
    sent = router.upstream.received[-1].headers
    assert "x-baz" not in sent and "x-bar" not in sent and sent["x-kept"] == "plain value"
    assert all(secret not in value for value in sent.values())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_chunks_are_relayed_as_they_arrive(router: Router, key: tuple[str, str], provider: str) -> None:
    _, secret = key
    text = f"Stream to me as you write, {provider}."
    router.upstream.hold_after = 1  # upstream writes its first chunk, then waits for more words
    try:
        with httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client:
            body = json.dumps(body_of(provider, [text], stream=True)).encode()
            headers = {"X-Memory-Key": secret, "content-type": "application/json"}
            with client.stream("POST", path_of(provider, True), content=body, headers=headers) as response:
                chunks = response.iter_raw()  # kept: a dropped iterator would close the connection
                first = next(chunks)
                # The first chunk came while the rest does not exist yet.
                assert first and not any(text.encode() in e.request.body for e in router.upstream.endings)
    finally:
        router.upstream.hold_after = None
    assert router.upstream.sent[-1].startswith(first)


class BlockedVaults:
    """The real vault directory, with appends that wait until the test lets them through."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.open = inner, threading.Event()

    def vault(self, name: str) -> Any:
        vault, gate = self.inner.vault(name), self.open

        class Blocked:
            def __getattr__(self, attr: str) -> Any:
                return getattr(vault, attr)

            async def append(self, messages: Any, model: Any = None, usage: Any = None) -> Any:
                while not gate.is_set():
                    await asyncio.sleep(0.01)
                return await vault.append(messages, model, usage)

        return Blocked()


def test_storing_never_delays_the_answer(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response]
) -> None:
    key_id, secret = key
    working = router.deps.vaults
    blocked = BlockedVaults(working)
    router.deps.vaults = blocked  # type: ignore[assignment]
    try:
        # The whole answer arrives while its turn cannot be stored yet.
        response = call("openai", secret, body_of("openai", ["Slow stores are fine."]))
        assert response.status_code == 200 and response.content == router.upstream.sent[-1]
        assert router.stored_texts(key_id) == []
        blocked.open.set()
        router.wait_stored(key_id, "Slow stores are fine.")
    finally:
        blocked.open.set()
        router.deps.vaults = working


# One more than httpx's default connection pool, which once capped the calls in flight upstream.
CALLS_IN_FLIGHT = 101


def test_more_calls_in_flight_than_a_connection_pool_all_reach_the_provider(
    router: Router, key: tuple[str, str]
) -> None:
    """Every call is held at the provider until all of them have arrived there, as long model
    answers overlap: none may wait on memvault for another's upstream connection."""
    _, secret = key
    marker = "pool-test"
    arrived: list[object] = []

    async def hold_until_all_arrived(received: Any) -> None:
        if marker not in received.body.decode("utf-8", "replace"):
            return
        arrived.append(received)
        until = time.monotonic() + 60
        while len(arrived) < CALLS_IN_FLIGHT and time.monotonic() < until:
            await asyncio.sleep(0.02)

    async def call_all() -> list[int]:
        limits = httpx.Limits(max_connections=None)
        async with httpx.AsyncClient(base_url=router.url, timeout=120, limits=limits) as client:
            calls = [
                client.post("/v1/chat/completions", headers={"X-Memory-Key": secret},
                            json=body_of("openai", [f"{marker} call {i}"]))
                for i in range(CALLS_IN_FLIGHT)
            ]
            return [response.status_code for response in await asyncio.gather(*calls)]

    router.upstream.before_answer = hold_until_all_arrived
    try:
        statuses = asyncio.run(call_all())
    finally:
        router.upstream.before_answer = None
    assert len(arrived) == CALLS_IN_FLIGHT
    assert statuses == [200] * CALLS_IN_FLIGHT


def test_half_a_surrogate_pair_is_relayed_as_sent_and_stored_as_characters(
    router: Router, key: tuple[str, str], call: Callable[..., httpx.Response]
) -> None:
    """JavaScript that cuts a string inside an emoji sends half a pair, escaped; a provider's stream
    may split a pair across two events. A call with no memory to inject goes upstream as sent; one
    with memory goes with the half made U+FFFD (the body is written anew); each turn is stored with
    the halves joined or made U+FFFD."""
    key_id, secret = key
    for question, stored, injected in [("the lamp \\ud83d is lit", "the lamp \ufffd is lit", False),
                                       ("where \\udc00 is the lamp", "where \ufffd is the lamp", True)]:
        raw = b'{"model":"test-model","stream":true,"messages":[{"role":"user","content":"%s"}]}' % question.encode()
        events = [{"content": "answer "}, {"content": "\ud83d"}, {"content": "\ude00 done"}]
        stream = b"".join(
            b"data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "test-model",
                                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}).encode() + b"\n\n"
            for delta in events) + b"data: [DONE]\n\n"
        router.upstream.reply_next_with(200, stream, "text/event-stream")
        response = call("openai", secret, raw, stream=True)
        assert response.status_code == 200 and response.content == stream
        forwarded = router.upstream.received[-1]
        if injected:
            assert response.headers["x-memory-items"] != "0"
            assert forwarded.json["messages"][-1]["content"] == stored
        else:
            assert forwarded.body == raw
        assert router.wait_stored(key_id, stored, "answer \U0001f600 done")

"""The HTTP side of the memory router: one pipeline every provider route calls.

Read and check the call, recall memory, inject it through the provider's codec, forward to the
upstream through ``deps.http``, relay the answer byte for byte, and schedule ``record`` once the
body is complete. Memory metadata travels in ``X-Memory-*`` response headers only.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from urllib.parse import unquote

from fastapi import Request, Response, WebSocket
from fastapi.responses import JSONResponse
from starlette.requests import HTTPConnection

from memvault.api.dependencies import caller_tokens, get_deps
from memvault.api.errors import error_headers
from memvault.api.memory_options import BODY_OBJECT, memory_headers, parse_options
from memvault.api.provider_credentials import (
    holds_memory_key,
    holds_memvault_credential,
    memory_key_in_key_header,
    names_gemini_key,
    query_holds_memory_key,
    query_without_credentials,
    with_stored_credential,
)
from memvault.api.providers import CODECS, ProviderCodec
from memvault.api.providers.base import require_object
from memvault.api.providers.sse import RelayResponse, Tap, read_reply, tap_for
from memvault.core.answers import prepare
from memvault.core.characters import repaired_json
from memvault.core.credentials.callers import memory_caller
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput, MemvaultError, PayloadTooLarge, Unauthorized
from memvault.core.memory.chat_calls import Conversation, MemoryOptions, PreparedMemory, Reply, degraded, off
from memvault.core.memory.routed_calls import RoutedCall
from memvault.core.ports import UpstreamResponse
from memvault.core.usage.limits import admit_call
from memvault.core.usage.meter import metering

log = logging.getLogger("memvault.router")

# Never forwarded: hop-by-hop headers, memvault's own, and what the edge in front of us added.
_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
_NOT_FORWARDED = _HOP_BY_HOP | {
    "host",
    "content-length",
    "accept-encoding",
    "cookie",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "x-provider-key",
}
_OWN_PREFIXES = ("x-memory-", "x-memvault-", "x-session-id", "cf-")


def error_response(codec: ProviderCodec, error: MemvaultError, memory: PreparedMemory | None = None) -> Response:
    """``error`` in the provider's envelope, with the status the provider gives such an error: bad
    input is a 400 to every provider's clients, whichever field it was."""
    status = 400 if isinstance(error, InvalidInput) else error.status
    headers = {**memory_headers(memory or off()), **error_headers(error)}
    return JSONResponse(codec.error_body(status, error.message, error.code), status_code=status, headers=headers)


def upstream_headers(incoming: Sequence[tuple[str, str]], codec: ProviderCodec) -> list[tuple[str, str]]:
    """The caller's headers as they go upstream: a memory key or brain credential never does, in any header."""
    provider_key = next((v for k, v in incoming if k.lower() == "x-provider-key" and not holds_memory_key(v)), None)
    headers = []
    for name, value in incoming:
        lower = name.lower()
        if lower in _NOT_FORWARDED or lower.startswith(_OWN_PREFIXES) or holds_memvault_credential(value):
            continue
        if lower in codec.key_headers and (provider_key is not None or holds_memory_key(value)):
            continue
        headers.append((name, value))
    if provider_key is not None:
        headers.append((codec.key_headers[0], codec.key_value(provider_key)))
    # Ask for an uncompressed body: it is relayed as is and read on the side.
    headers.append(("accept-encoding", "identity"))
    return headers


def upstream_url(deps: Deps, codec: ProviderCodec, request: Request) -> str:
    base = codec.base_url(deps.settings).rstrip("/")
    query = query_without_credentials(request.url.query)
    return f"{base}{request.url.path}" + (f"?{query}" if query else "")


def relayed_headers(upstream: Sequence[tuple[str, str]], memory: PreparedMemory) -> list[tuple[bytes, bytes]]:
    """Upstream's headers as the client gets them. The body is relayed as the HTTP client hands it
    over, decoded: its length is upstream's unless upstream encoded it (despite being asked not to)."""
    encoded = any(k.lower() == "content-encoding" for k, _ in upstream)
    dropped = _HOP_BY_HOP | {"content-length", "content-encoding"} if encoded else _HOP_BY_HOP
    kept = [(k, v) for k, v in upstream if k.lower() not in dropped and not k.lower().startswith("x-memory-")]
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in [*kept, *memory_headers(memory).items()]]


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise PayloadTooLarge(f"request body is larger than {limit} bytes")
    return bytes(body)


async def memory_key(deps: Deps, request: Request, codec: ProviderCodec) -> MemoryKey | None:
    """The caller's memory key; ``None`` when the key store cannot answer (memory degrades).
    `X-Memory-Key` names it, else the provider's key header when it holds a memory key (an SDK
    given the memory key as its API key): otherwise that header carries the provider's key."""
    tokens = caller_tokens(request.headers, bearer=False)
    if tokens.memory_key is None:
        tokens = replace(tokens, memory_key=memory_key_in_key_header(request.headers, codec))
    if tokens.memory_key is None and query_holds_memory_key(request.url.query):
        raise Unauthorized("a memory key is never read from the query string, which logs keep: "
                           f"send it in X-Memory-Key or {codec.key_headers[0]}")
    try:
        return await memory_caller(deps, tokens)
    except Unauthorized:
        raise
    except Exception as exc:  # fail open: the key store being down must not stop the chat call
        log.warning("memory key check failed, answering without memory: %s", type(exc).__name__)
        return None


async def _parse_call(
    request: Request, deps: Deps, codec: ProviderCodec, stream: bool | None
) -> tuple[bytes, dict[str, object], Conversation, MemoryOptions, MemoryKey | None]:
    # The key is checked while the body arrives; its verdict still comes first, so a caller without
    # a valid key learns nothing about how its headers or body would have been read. The check's
    # task never ends in an exception (Pyodide's loop would log it as unhandled): it hands it over.
    key_check = asyncio.ensure_future(_outcome(memory_key(deps, request, codec)))
    try:
        raw = await read_body(request, deps.settings.max_provider_body_bytes)
        try:
            body = require_object(json.loads(raw))
        except RecursionError:
            raise InvalidInput("the request body nests deeper than JSON is read here") from None
        except ValueError as exc:  # malformed, not UTF-8, or a number too long to read
            raise InvalidInput("the request body is not valid JSON") from exc
        body = repaired_json(raw, body)
        options = parse_options(request.headers, deps.settings.context_limit_tokens, body.get(BODY_OBJECT))
        conversation = codec.extract(body, stream=stream)
    except BaseException:
        _checked(await key_check)
        raise
    return raw, body, conversation, options, _checked(await key_check)


KeyOutcome = tuple[MemoryKey | None, MemvaultError | None]


async def _outcome(check: Awaitable[MemoryKey | None]) -> KeyOutcome:
    try:
        return await check, None
    except MemvaultError as exc:
        return None, exc


def _checked(outcome: KeyOutcome) -> MemoryKey | None:
    key, error = outcome
    if error is not None:
        raise error
    return key


async def forward_with_memory(
    request: Request, provider: str, *, model: str | None = None, stream: bool | None = None
) -> Response:
    """The whole memory-router call for one provider request (``model``/``stream`` from the path)."""
    deps = get_deps(request)
    codec = CODECS[provider]
    try:
        _check_path(request.url.path)
        raw, body, conversation, options, key = await _parse_call(request, deps, codec, stream)
    except MemvaultError as exc:
        return error_response(codec, exc)
    if model is not None:
        conversation = replace(conversation, model=model)
    # Embeddings the recall computes are noted on this call's meter (the task keeps it).
    with metering() as recall_meter:
        recall = None if options.mode == "off" or key is None else asyncio.ensure_future(
            prepare(deps, key, conversation, options)
        )
    # The limits are checked while memory is recalled; nothing is forwarded before they admit the call.
    try:
        await admit_call(deps.db, key, deps.clock())
    except MemvaultError as exc:
        if recall is not None:
            recall.cancel()
        return error_response(codec, exc)
    # The request's own preparation runs while memory is recalled.
    outgoing, changed = codec.strip_memory_flags(body)
    if BODY_OBJECT in outgoing:
        outgoing, changed = {k: v for k, v in outgoing.items() if k != BODY_OBJECT}, True
    url = upstream_url(deps, codec, request)
    credential = asyncio.ensure_future(with_stored_credential(
        deps, None if key is None else key.id, codec, request.headers, request.url.query,
        upstream_headers(request.headers.items(), codec)))
    memory = off() if options.mode == "off" else degraded() if recall is None else await recall
    try:
        headers = await credential
    except MemvaultError as exc:
        return error_response(codec, exc, memory)
    if memory.context:
        outgoing, changed = codec.inject(outgoing, memory.context), True
    payload = json.dumps(outgoing, ensure_ascii=False).encode("utf-8") if changed else raw
    # The receipt is kept and the call's journal row opened while the provider answers; the
    # receipt is readable once the headers are out.
    routed = None if key is None else RoutedCall(deps, key.id, conversation, options, memory, recall is not None,
                                                 recall_meter)
    opened = None if routed is None else asyncio.ensure_future(routed.open(provider, memory))
    sent = time.perf_counter()
    try:
        upstream = await deps.http.send("POST", url, headers, payload)
    except MemvaultError as exc:
        receipt_id = None if opened is None else await opened
        if routed is not None:
            deps.background.run(functools.partial(routed.settle, None, False, 0.0))
        return error_response(codec, exc, replace(memory, receipt=receipt_id))
    forwarding_ms = round((time.perf_counter() - sent) * 1000.0, 2)
    memory = replace(memory, receipt=None if opened is None else await opened)
    if routed is None:
        return RelayResponse(upstream, relayed_headers(upstream.headers, memory))
    return _relay(deps, codec, upstream, memory, routed, forwarding_ms)


def _relay(deps: Deps, codec: ProviderCodec, upstream: UpstreamResponse, memory: PreparedMemory, routed: RoutedCall,
           forwarding_ms: float) -> RelayResponse:
    """Relay a memory key's call: the answer's end waits for its journal row, and the call is
    settled in the background once the relay is over, delivered or not."""
    headers = relayed_headers(upstream.headers, memory)
    tap: Tap | None = None
    if 200 <= upstream.status < 300:
        content_type = next((v for k, v in upstream.headers if k.lower() == "content-type"), "")
        length = next((v for k, v in headers if k == b"content-length"), b"")
        tap = tap_for(codec, content_type, int(length) if length.isdigit() else None)

    async def before_end(finished: Tap) -> None:
        await routed.answer(read_reply(finished), forwarding_ms)

    def on_delivered(finished: Tap) -> None:
        deps.background.run(functools.partial(_settle_delivered, routed, finished, forwarding_ms))

    def on_ended() -> None:
        deps.background.run(functools.partial(routed.settle, _said_so_far(tap), False, forwarding_ms))

    return RelayResponse(upstream, headers, tap, on_delivered, on_ended, before_end)


def _said_so_far(tap: Tap | None) -> Reply | None:
    """What an answer not delivered said before it stopped, for the tokens it counted; None when
    its body cannot be read so far (a JSON body cut short)."""
    if tap is None:
        return None
    try:
        return tap.reply()
    except Exception:  # cut off mid-body: nothing to count, and nothing worth a warning
        return None


async def _settle_delivered(routed: RoutedCall, tap: Tap, forwarding_ms: float) -> None:
    await routed.settle(read_reply(tap), True, forwarding_ms)


# A WebSocket (OpenAI's Realtime API, Gemini's Live API) holds one connection open both ways,
# which a relayed request and its response cannot carry.
WEBSOCKET_REFUSED = "memvault relays HTTP only: connect a WebSocket (such as the Realtime API) to the provider directly"


def websocket_refusal(provider: str) -> Response:
    """The answer to a WebSocket handshake, in the provider's envelope; nothing is forwarded."""
    return error_response(CODECS[provider], InvalidInput(WEBSOCKET_REFUSED))


async def refuse_websocket(websocket: WebSocket) -> None:
    """Refuse a WebSocket handshake with the provider's 400 where the server can send an HTTP
    answer to one; otherwise with a policy close (which clients see as a 403)."""
    path = websocket.url.path
    provider = "gemini" if path.startswith(("/ws/", "/v1beta/")) else provider_for_listing(websocket)
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(websocket_refusal(provider))
    else:
        await websocket.close(code=1008)


def _check_path(path: str) -> None:
    """A path forwarded upstream must be one a URL can carry as is: no control characters, and no
    `.` or `..` segment (percent-encoded or not), which would name another path of upstream's host."""
    if not path.isprintable() or any(c in path for c in " \\") or {".", ".."} & {unquote(s) for s in path.split("/")}:
        raise InvalidInput("the request path holds characters a provider URL cannot carry")


async def pass_through(request: Request, provider: str) -> Response:
    """Forward a request with no memory involved (model listings), relaying the answer as is."""
    deps = get_deps(request)
    codec = CODECS[provider]
    if request.headers.get("upgrade", "").strip().lower() == "websocket":
        # A runtime that does not take WebSockets itself (Workers) hands the handshake on as a GET.
        return websocket_refusal(provider)
    try:
        _check_path(request.url.path)
        key = await memory_key(deps, request, codec)
        await admit_call(deps.db, key, deps.clock())
        key_id = None if key is None else key.id
        raw = await read_body(request, deps.settings.max_provider_body_bytes)
        headers = await with_stored_credential(deps, key_id, codec, request.headers, request.url.query,
                                               upstream_headers(request.headers.items(), codec))
        upstream = await deps.http.send(request.method, upstream_url(deps, codec, request), headers, raw)
    except MemvaultError as exc:
        return error_response(codec, exc)
    return RelayResponse(upstream, relayed_headers(upstream.headers, off()))


def provider_for_listing(request: HTTPConnection) -> str:
    """``GET /v1/models`` is shared by OpenAI and Anthropic (and Gemini's SDK): tell by the key
    header, or Gemini's `?key=`, so a Gemini key never goes to another provider."""
    headers = request.headers
    if "x-goog-api-key" in headers or names_gemini_key(request.url.query):
        return "gemini"
    if "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic"
    return "openai"


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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from memvault.api.dependencies import caller_tokens, get_deps
from memvault.api.errors import error_headers
from memvault.api.memory_options import BODY_OBJECT, memory_headers, parse_options
from memvault.api.provider_credentials import (
    holds_memory_key,
    holds_memvault_credential,
    memory_key_in_key_header,
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
from memvault.core.memory.accounting import account, routed_usage
from memvault.core.memory.chat_calls import (
    Conversation,
    MemoryOptions,
    PreparedMemory,
    degraded,
    off,
    record,
)
from memvault.core.receipts.record import complete, keep_routed
from memvault.core.usage.limits import admit_call
from memvault.core.usage.meter import Meter, metering

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
    return JSONResponse(codec.error_body(status, error.message), status_code=status, headers=headers)


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


async def memory_key(deps: Deps, headers: Mapping[str, str], codec: ProviderCodec) -> MemoryKey | None:
    """The caller's memory key; ``None`` when the key store cannot answer (memory degrades).
    `X-Memory-Key` names it, else the provider's key header when it holds a memory key (an SDK
    given the memory key as its API key): otherwise that header carries the provider's key."""
    tokens = caller_tokens(headers, bearer=False)
    if tokens.memory_key is None:
        tokens = replace(tokens, memory_key=memory_key_in_key_header(headers, codec))
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
    # a valid key learns nothing about how its headers or body would have been read.
    key_check = asyncio.ensure_future(memory_key(deps, request.headers, codec))
    try:
        raw = await read_body(request, deps.settings.max_provider_body_bytes)
        try:
            body = require_object(json.loads(raw))
        except (ValueError, RecursionError) as exc:  # malformed, not UTF-8, or nested past any real request
            raise InvalidInput("the request body is not valid JSON") from exc
        body = repaired_json(raw, body)
        options = parse_options(request.headers, deps.settings.context_limit_tokens, body.get(BODY_OBJECT))
        conversation = codec.extract(body, stream=stream)
    except BaseException:
        await key_check
        raise
    return raw, body, conversation, options, await key_check


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
    key_id = None if key is None else key.id
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
    # The receipt is kept while the provider answers, and is readable once the headers are out.
    receipt = None if key is None else asyncio.ensure_future(_keep_receipt(deps, key.id, provider, options, memory))
    sent = time.perf_counter()
    try:
        upstream = await deps.http.send("POST", url, headers, payload)
    except MemvaultError as exc:
        return error_response(codec, exc, replace(memory, receipt=None if receipt is None else await receipt))
    forwarding_ms = round((time.perf_counter() - sent) * 1000.0, 2)
    memory = replace(memory, receipt=None if receipt is None else await receipt)

    tap: Tap | None = None
    if 200 <= upstream.status < 300 and key_id is not None:
        content_type = next((v for k, v in upstream.headers if k.lower() == "content-type"), "")
        tap = tap_for(codec, content_type)
    call = _Call(deps, key_id, conversation, options, memory, recall is not None, recall_meter, forwarding_ms)

    def on_delivered(finished: Tap) -> None:
        deps.background.run(functools.partial(_remember, call, finished))

    def on_ended() -> None:
        deps.background.run(functools.partial(_remember, call, None))

    return RelayResponse(upstream, relayed_headers(upstream.headers, memory), tap, on_delivered, on_ended)


def _check_path(path: str) -> None:
    """A path forwarded upstream must be one a URL can carry as is: no control characters, and no
    `.` or `..` segment (percent-encoded or not), which would name another path of upstream's host."""
    if not path.isprintable() or any(c in path for c in " \\") or {".", ".."} & {unquote(s) for s in path.split("/")}:
        raise InvalidInput("the request path holds characters a provider URL cannot carry")


async def _keep_receipt(deps: Deps, key_id: str, provider: str, options: MemoryOptions, memory: PreparedMemory) -> str | None:
    return await keep_routed(deps, key_id, provider, memory.query, options.session_id, options.context_limit,
                             memory.found, memory.retrieval_ms, memory.injected, memory.status, memory.facts)


@dataclass(frozen=True)
class _Call:
    """What the background work after a relayed answer needs of its call."""

    deps: Deps
    key_id: str | None
    conversation: Conversation
    options: MemoryOptions
    memory: PreparedMemory
    recalled: bool
    recall_meter: Meter
    forwarding_ms: float


async def _remember(call: _Call, tap: Tap | None) -> None:
    """Background: assemble the relayed reply (``tap``: None when the answer was not delivered),
    add the provider's usage to the receipt, store the turn if the answer is complete (the turn's
    ids are the receipt's), and account the call."""
    if call.key_id is None:
        return
    reply = None if tap is None else read_reply(tap)
    receipt_id = call.memory.receipt
    if receipt_id is not None and tap is not None:
        tokens = (None, None) if reply is None else (reply.input_tokens, reply.output_tokens)
        await complete(call.deps, receipt_id, *tokens, call.forwarding_ms)
    stored = []
    with metering() as store_meter:
        if reply is not None and reply.complete and call.options.writes:
            stored = await record(call.deps, call.key_id, call.conversation, reply, call.options, receipt_id)
    usage = routed_usage(reply, call.memory, call.recalled, stored, call.recall_meter, store_meter)
    await account(call.deps, call.key_id, call.conversation.model, usage)


async def pass_through(request: Request, provider: str) -> Response:
    """Forward a request with no memory involved (model listings), relaying the answer as is."""
    deps = get_deps(request)
    codec = CODECS[provider]
    try:
        _check_path(request.url.path)
        key = await memory_key(deps, request.headers, codec)
        await admit_call(deps.db, key, deps.clock())
        key_id = None if key is None else key.id
        raw = await read_body(request, deps.settings.max_provider_body_bytes)
        headers = await with_stored_credential(deps, key_id, codec, request.headers, request.url.query,
                                               upstream_headers(request.headers.items(), codec))
        upstream = await deps.http.send(request.method, upstream_url(deps, codec, request), headers, raw)
    except MemvaultError as exc:
        return error_response(codec, exc)
    return RelayResponse(upstream, relayed_headers(upstream.headers, off()))


def provider_for_listing(headers: Mapping[str, str]) -> str:
    """``GET /v1/models`` is shared by OpenAI and Anthropic (and Gemini's SDK): tell by the key header."""
    if "x-goog-api-key" in headers:
        return "gemini"
    if "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic"
    return "openai"


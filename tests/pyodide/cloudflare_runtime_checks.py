"""Checks of the Cloudflare runtime adapters that no shared contract suite covers: the DO SQL
executor's transaction and error paths, the DO vault client, waitUntil, fetch streaming, and the
Workers composition root end to end. Run inside Pyodide by runner.py; each check takes the
harness context."""

from __future__ import annotations

import asyncio
import contextlib
import json
import types
from collections.abc import Awaitable, Callable
from typing import Any

import js
from pyodide.ffi import JsException, create_proxy

from memvault.adapters.cloudflare.background import WaitUntilTasks
from memvault.adapters.cloudflare.convert import js_array
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.http_client import FetchHttpClient
from memvault.adapters.cloudflare.rpc_stub import error_from_rpc
from memvault.adapters.cloudflare.vaults import DurableObjectVaultDirectory
from memvault.core.errors import Conflict, StorageUnavailable, UpstreamUnavailable
from memvault.core.memory.names import vault_name
from memvault.core.memory.vault_table import VAULT_OPERATIONS
from memvault.core.models import Message, SearchQuery


async def context() -> Any:
    return js.memvaultTest


async def check_do_sql_reads_rows_blobs_and_nothing(h: Any) -> None:
    sql = DurableObjectSql(h.newDurableObjectStorage())
    sql.execute("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, x REAL, b BLOB, z TEXT)")
    sql.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", ["one", 7, 0.25, b"\x00\x01\xfe", None])
    assert sql.execute("SELECT * FROM t") == [{"id": "one", "n": 7, "x": 0.25, "b": b"\x00\x01\xfe", "z": None}]
    assert sql.first("SELECT * FROM t WHERE id = ?", ["none"]) is None
    assert sql.execute("SELECT * FROM t WHERE id = ?", ["none"]) == []
    assert sql.execute("SELECT count(*) AS c FROM t WHERE n = ?", [True]) == [{"c": 0}]


async def check_do_sql_transaction_rolls_back_and_reraises(h: Any) -> None:
    sql = DurableObjectSql(h.newDurableObjectStorage())
    sql.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")

    class Boom(Exception):
        pass

    def failing() -> None:
        sql.execute("INSERT INTO t VALUES ('kept-out')")
        raise Boom("inside the transaction")

    try:
        sql.transaction(failing)
    except Boom:
        pass
    else:
        raise AssertionError("the work's exception was lost")
    assert sql.execute("SELECT * FROM t") == []

    def nested() -> list[str]:
        sql.execute("INSERT INTO t VALUES ('outer')")
        with contextlib.suppress(Boom):
            sql.transaction(failing)
        return [r["k"] for r in sql.execute("SELECT k FROM t")]

    assert sql.transaction(nested) == ["outer"]
    assert sql.execute("SELECT k FROM t") == [{"k": "outer"}]
    try:
        sql.execute("BEGIN")
    except JsException:
        pass
    else:
        raise AssertionError("the stand-in allowed BEGIN, which ctx.storage.sql refuses")


async def check_vault_client_speaks_plain_data_over_rpc(h: Any) -> None:
    vault = DurableObjectVaultDirectory(h.env.VAULT).vault(vault_name("k-rpc", "s1"))
    messages = [
        Message(role="user", content=f"My cat Miso likes tuna, message {i}. " * 12, timestamp=1000.0 + i, id=f"m{i}")
        for i in range(6)
    ]
    appended = await vault.append(messages)
    flushed = await vault.flush()
    assert appended.rows or flushed.rows
    stats = await vault.stats()
    assert stats.messages + stats.chunks >= 1
    found = await vault.search(SearchQuery(text="tuna", vector=None, depth=5))
    assert found and "tuna" in found[0].row.text
    jobs = await vault.unembedded(50)
    assert jobs
    attached = await vault.attach_embeddings("test-model", {j.id: [1.0, 0.0, 0.0] for j in jobs})
    assert attached == len(jobs)
    assert await vault.rows(None, 100)
    await vault.clear(True)
    assert (await vault.stats()).messages == 0


async def check_the_runtime_finds_one_vault_rpc_method_per_operation(h: Any) -> None:
    # As the Workers runtime looks for RPC methods: the public plain functions of the class, found
    # with dir() through its bases, or (earlier runtimes) in the class's own namespace only.
    from durable_objects.vault import Vault

    def own(name: str) -> Any:
        return next(vars(c)[name] for c in Vault.__mro__ if name in vars(c))

    found = {name for name in dir(Vault) if not name.startswith("_") and isinstance(own(name), types.FunctionType)}
    declared = {name for name, member in vars(Vault).items() if not name.startswith("_") and callable(member)}
    assert found == declared == set(VAULT_OPERATIONS), (found, declared)


async def check_vault_errors_come_back_as_domain_errors(h: Any) -> None:
    # The InvalidInput path through the real Vault class is in the vault suite; here the rest.
    broken = js.Object.new()
    broken.stats = create_proxy(lambda: js.Promise.reject(js.Error.new("Network connection lost. secret memory text")))
    namespace = js.Object.new()
    namespace.idFromName = create_proxy(lambda name: name)
    namespace.get = create_proxy(lambda _id: broken)
    try:
        await DurableObjectVaultDirectory(namespace).vault("k:core").stats()
    except StorageUnavailable as exc:
        assert "secret" not in str(exc) and "stats" in str(exc)
    else:
        raise AssertionError("a failed RPC did not raise StorageUnavailable")
    traceback_text = "Traceback (most recent call last):\n  File ...\nmemvault.core.errors.Conflict: already there"
    rebuilt = error_from_rpc("append", traceback_text)
    assert type(rebuilt) is Conflict and rebuilt.message == "already there"


async def check_wait_until_gets_a_promise_that_settles_after_the_work(h: Any) -> None:
    ctx = h.newContext()
    done: list[str] = []

    async def work() -> None:
        await asyncio.sleep(0.01)
        done.append("ran")

    async def broken() -> None:
        raise RuntimeError("background failure")

    tasks = WaitUntilTasks(ctx)
    tasks.run(work)
    tasks.run(broken)
    assert ctx.promises.length == 2
    assert str(js.Object.prototype.toString.call(ctx.promises[0])) == "[object Promise]"
    await js.Promise.all(ctx.promises)
    assert done == ["ran"]


async def check_fetch_client_round_trips_and_streams(h: Any) -> None:
    client = FetchHttpClient()
    response = await client.send("POST", f"{h.upstream}/echo", [("authorization", "Bearer t"), ("x-a", "1")], b'{"q":1}')
    assert response.status == 200
    assert ("x-upstream", "yes") in response.headers
    body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert json.loads(body) == {"method": "POST", "echo": '{"q":1}', "auth": "Bearer t"}

    missing = await client.send("GET", f"{h.upstream}/missing", [], b"")
    assert missing.status == 404
    await missing.aclose()

    stream = await client.send("GET", f"{h.upstream}/stream", [], b"")
    chunks = stream.aiter_bytes()
    assert await anext(chunks) == b"data: part 0\n\n"
    await (await client.send("POST", f"{h.upstream}/release", [], b"")).aclose()
    rest = b"".join([chunk async for chunk in chunks])
    assert rest == b"data: part 1\n\ndata: part 2\n\n"

    early = await client.send("GET", f"{h.upstream}/stream", [], b"")
    async for _ in early.aiter_bytes():
        break
    await early.aclose()
    await (await client.send("POST", f"{h.upstream}/release", [], b"")).aclose()



async def check_fetch_failures_are_upstream_unavailable_without_the_url(h: Any) -> None:
    """A fetch that rejects, or a body whose stream errors, is the 502 the local client raises too;
    the message names the JS error's kind, never the URL (it may carry a provider key)."""
    url = "https://upstream.invalid/v1beta/models/m:generateContent?key=AIza-secret"
    refused = FetchHttpClient(js.Function.new("url", "return Promise.reject(new TypeError('fetch failed: ' + url))"))
    try:
        await refused.send("POST", url, [], b"{}")
    except UpstreamUnavailable as exc:
        assert str(exc) == "upstream unreachable: TypeError", str(exc)
    else:
        raise AssertionError("a rejected fetch was not UpstreamUnavailable")
    cut_off = FetchHttpClient(js.Function.new("url", """
        return Promise.resolve(new Response(new ReadableStream({
          pull(c) { if (this.sent) { c.error(new Error('cut off: ' + url)); } else { this.sent = true; c.enqueue(new Uint8Array([100])); } }
        })));"""))
    response = await cut_off.send("POST", url, [], b"{}")
    chunks = response.aiter_bytes()
    assert await anext(chunks) == b"d"
    try:
        await anext(chunks)
    except UpstreamUnavailable as exc:
        assert str(exc) == "upstream body interrupted: Error", str(exc)
    else:
        raise AssertionError("a body cut off was not UpstreamUnavailable")

async def workers_env(h: Any, **vars: str) -> Any:
    """A Worker ``env`` with every binding wrangler.toml declares, fresh D1 included, as the entry
    sees it: each binding carries the JS class name the runtime gives it, and the SDK's
    ``WorkerEntrypoint`` wraps the whole (the same wrappers production's adapters are handed)."""
    from entry import Default

    bindings = {
        "DB": h.runtimeShaped("D1Database", await h.freshD1()),
        "VAULT": h.runtimeShaped("DurableObjectNamespace", h.env.VAULT),
        "VECTORIZE": h.runtimeShaped("VectorizeIndexImpl", h.newVectorize()),
        "BODIES": h.runtimeShaped("R2Bucket", h.env.BLOBS),
        "AI": h.runtimeShaped("Ai", h.newWorkersAi()),
        "CACHE": h.runtimeShaped("KvNamespace", h.env.CACHE),
        **vars,
    }
    env = js.Object.fromEntries(js_array([js_array([name, value]) for name, value in bindings.items()]))
    return Default(h.newContext(), env).env


async def check_workers_deps_store_and_search_end_to_end(h: Any) -> None:
    """The Workers composition root over these adapters, through the core operations: a stored
    conversation is found again, and clearing removes it from vault and mirror alike."""
    from memvault.core import memory
    from memvault.core.credentials.keys import authenticate, create_key
    from memvault.runtime.workers import build_deps

    env = await workers_env(h)
    ctx = h.newContext()
    deps = build_deps(env, ctx)
    assert deps.platform is not None and all(deps.platform.bindings.values()), deps.platform
    key, secret = await create_key(deps.db, "pyodide", now=1_700_000_000.0)
    assert (await authenticate(deps.db, secret)).id == key.id
    messages = [
        Message(role="user", content=f"Note {i}: the boat Nautilus is moored at pier {40 + i}. " * 10,
                timestamp=1_700_000_000.0 + i, id=f"e2e-{i}")
        for i in range(8)
    ]
    stored = await memory.store_conversation(deps, key.id, messages)
    assert stored.messages_accepted == len(messages)
    await js.Promise.all(ctx.promises)
    found = await memory.search_memory(deps, key.id, "where is the Nautilus moored", now=1_700_000_100.0)
    assert found.items and any("Nautilus" in item.text for item in found.items), found
    forgotten = await memory.forget(deps, key.id, ["e2e-3", "e2e-404"])
    assert forgotten == {"forgotten": ["e2e-3"], "not_found": ["e2e-404"]}
    await js.Promise.all(ctx.promises)  # the mirror catches up in the background (waitUntil)
    mirrored = await deps.db.query("SELECT text FROM mirror_rows WHERE key_id = ?", [key.id])
    assert mirrored and not any("pier 43" in row["text"] for row in mirrored), mirrored
    cleared = await memory.clear_memory(deps, key.id)
    assert cleared == [vault_name(key.id, None)]
    await js.Promise.all(ctx.promises)
    assert await deps.db.query("SELECT id FROM mirror_rows WHERE key_id = ?", [key.id]) == []


async def check_brain_over_d1_r2_and_vectorize_keeps_its_walls(h: Any) -> None:
    """The brain through the Workers composition root: facts written by a writer land in D1 (a long
    body in R2, vectors in Vectorize); a reader of one scope finds its own facts by keyword and
    hybrid search, recall and body, and nothing of another scope."""
    import hashlib

    from memvault.core import brain
    from memvault.core.errors import NotFound
    from memvault.runtime.workers import build_deps

    def digest(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    credentials = {
        digest("tok-writer"): {"name": "writer", "scopes": ["business", "family"], "writer": True},
        digest("tok-family"): {"name": "family", "scopes": ["family"], "writer": False},
    }
    deps = build_deps(await workers_env(h, MEMVAULT_BRAIN_CREDENTIALS=json.dumps(credentials)), h.newContext())
    writer = await brain.auth_of("tok-writer", deps)
    family = await brain.auth_of("tok-family", deps)

    async def plain(op: Any, credential: Any, data: dict[str, Any]) -> Any:
        return brain.to_plain(await op.perform(deps, credential, data))

    long_body = "The family cabin at Lake Orta has a green door. " * 40
    family_ids = (await plain(brain.WRITE_FACTS, writer, {"source": "notes:family", "scope": "family",
                                                          "facts": [{"content": long_body}]}))["ids"]
    business_ids = (await plain(brain.WRITE_FACTS, writer, {"source": "notes:biz", "scope": "business",
                                                            "facts": [{"content": "Invoice #20028 covers the cabin repairs."}]}))["ids"]
    for mode in ("keyword", "hybrid"):
        found = await plain(brain.SEARCH_FACTS, family, {"query": "cabin", "mode": mode})
        assert {row["id"] for row in found["results"]} == set(family_ids), (mode, found)
    recalled = await plain(brain.RECALL, family, {"query": "cabin"})
    assert all(row["scope"] == "family" for tier in ("recent", "facts") for row in recalled[tier])
    body = await plain(brain.FACT_BODY, family, {"id": family_ids[0]})
    assert "green door" in json.dumps(body)
    try:
        await plain(brain.FACT_BODY, family, {"id": business_ids[0]})
    except NotFound:
        pass
    else:
        raise AssertionError("a fact behind the wall must read as absent")
    # D1 runs the in-scope BM25 statements too: several terms, a phrase, a long query.
    before = await plain(brain.SEARCH_FACTS, family, {"query": "green door cabin Lake Orta"})
    await plain(brain.WRITE_FACTS, writer, {"source": "notes:biz2", "scope": "business",
                                            "facts": [{"content": f"green door cabin Lake Orta {i}"} for i in range(5)]})
    after = await plain(brain.SEARCH_FACTS, family, {"query": "green door cabin Lake Orta"})
    assert before == after and [r["id"] for r in after["results"]] == list(family_ids), after
    words = " ".join(f"word{i}" for i in range(120))
    assert (await plain(brain.SEARCH_FACTS, family, {"query": f"cabin {words}"}))["results"]


async def check_stored_brain_credentials_are_read_from_d1(h: Any) -> None:
    """A brain credential stored in D1's key store (as `memvault brain-token create` stores it
    locally) authenticates through ``auth_of`` on the Workers composition root beside the secret's,
    is walled to the deployment's scopes, and is refused once revoked."""
    from memvault.core import brain
    from memvault.core.credentials import keys
    from memvault.core.errors import Unauthorized
    from memvault.runtime.workers import build_deps

    deps = build_deps(await workers_env(h), h.newContext())
    stored, token = await brain.create_brain_token(deps, ["family", "shared"], writer=True, name="d1-writer")
    credential = await brain.auth_of(token, deps)
    assert (credential.name, credential.scopes, credential.writer) == ("d1-writer", frozenset({"family", "shared"}), True)
    rows = await deps.db.query("SELECT kind, key_hash FROM memory_keys WHERE id = ?", [stored.id])
    assert rows == [{"kind": "brain", "key_hash": keys.hash_key(token)}], rows
    await keys.revoke_brain_key(deps.db, stored.id, 1_700_000_000.0)
    try:
        await brain.auth_of(token, deps)
    except Unauthorized:
        pass
    else:
        raise AssertionError("a revoked brain credential must be refused")


async def check_workers_searches_repeat_from_kv_until_a_write(h: Any) -> None:
    """The read cache on Workers: KV holds a repeated search, and the vault DO's generation in the
    cache key makes the next search after a write a fresh one."""
    from memvault.core import memory
    from memvault.core.credentials.keys import create_key
    from memvault.runtime.workers import build_deps

    ctx = h.newContext()
    deps = build_deps(await workers_env(h), ctx)
    key, _ = await create_key(deps.db, "kv", now=1_700_000_000.0)
    await memory.store_conversation(deps, key.id, [Message("user", "The kayak is red.", 1_700_000_000.0, "k1")])
    await js.Promise.all(ctx.promises)
    first = await memory.search_memory(deps, key.id, "what colour is the kayak")
    await js.Promise.all(ctx.promises)  # the answer is kept in KV after it went out
    again = await memory.search_memory(deps, key.id, "what colour is the kayak")
    assert "cached" not in first.metrics and again.metrics.get("cached") is True, again.metrics
    assert [i.text for i in again.items] == [i.text for i in first.items]
    await memory.store_conversation(deps, key.id, [Message("user", "The kayak is now painted blue.", 1_700_000_001.0, "k2")])
    await js.Promise.all(ctx.promises)
    after = await memory.search_memory(deps, key.id, "what colour is the kayak")
    assert "cached" not in after.metrics and any("blue" in i.text for i in after.items), after


async def check_access_sign_in_verifies_rs256_and_fetches_keys_through_fetch(h: Any) -> None:
    """Cloudflare Access sign-in inside Pyodide: the team's key set comes through the Workers
    fetch adapter, a token Node signed verifies in pure Python and maps to its credential, and a
    token for another application or with altered claims does not."""
    import hashlib
    import time

    from memvault.core.brain.scopes import auth_of
    from memvault.core.credentials.access import access_identity
    from memvault.core.errors import Unauthorized
    from memvault.runtime.workers import build_deps

    credentials = {hashlib.sha256(b"tok-family").hexdigest(): {"name": "family", "scopes": ["family"]}}
    env = await workers_env(
        h, MEMVAULT_BRAIN_CREDENTIALS=json.dumps(credentials), MEMVAULT_ACCESS_TEAM_DOMAIN=h.upstream,
        MEMVAULT_ACCESS_AUD="pyodide-aud", MEMVAULT_ACCESS_USERS=json.dumps({"fam@example.com": "family"}),
    )
    deps = build_deps(env, h.newContext())
    claims = {"iss": h.upstream, "aud": ["pyodide-aud"], "email": "fam@example.com", "exp": time.time() + 300}
    token = h.accessToken(json.dumps(claims))
    identity = await access_identity(deps, token)
    assert (await auth_of(identity, deps)).scopes == frozenset({"family"})
    head, _, signature = token.split(".")
    other_claims = h.accessToken(json.dumps({**claims, "email": "boss@example.com"})).split(".")[1]
    wrong_audience = h.accessToken(json.dumps({**claims, "aud": ["other"]}))
    for refused in (wrong_audience, f"{head}.{other_claims}.{signature}", f"{head}.e30.{signature}"):
        try:
            await access_identity(deps, refused)
        except Unauthorized:
            continue
        raise AssertionError("a token that should not verify was taken")


async def check_entry_serves_health_through_the_sdk_asgi_adapter(h: Any) -> None:
    """A request reaches the FastAPI app the way production's does: the real ``WorkerEntrypoint``
    wraps ``env``, the entry hands a JS ``Request`` to the SDK's ASGI adapter, and a JS
    ``Response`` comes back with the presence-only health report of the wrapped bindings, the cron
    triggers the staged bundle was built with, and a retired variable the env still sets."""
    from entry import Default

    env = await workers_env(h, MEMVAULT_BRAIN_CREDENTIALS="not-shown", MEMVAULT_HOT_WINDOW_HOURS="2")
    response = await Default(h.newContext(), env).fetch(js.Request.new("https://memvault.test/health"))
    assert str(js.Object.prototype.toString.call(response)) == "[object Response]"
    text = await response.text()
    assert response.status == 200, text
    body = json.loads(text)
    assert body["runtime"] == "workers" and body["missing"] == [] and all(body["bindings"].values()), body
    assert body["secrets"] == {"MEMVAULT_BRAIN_CREDENTIALS": True} and "not-shown" not in text
    assert body["cron_triggers"] == 1 and body["retired_settings"] == ["MEMVAULT_HOT_WINDOW_HOURS"]
    missing = await Default(h.newContext(), env).fetch(js.Request.new("https://memvault.test/no-such-route"))
    assert missing.status == 404



class LingeringUpstream:
    """An OpenAI stream that, like a real provider, keeps its connection open after ``[DONE]``
    (and, with ``hold_at``, stops midway) until released."""

    status = 200

    def __init__(self, hold_at: int | None = None) -> None:
        self.headers = [("content-type", "text/event-stream")]
        events = [{"choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]} for w in ("Hel", "lo")]
        events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        self.chunks = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
        self.hold_at, self.release, self.closed, self.ended = hold_at, asyncio.Event(), False, False

    async def aiter_bytes(self) -> Any:
        for index, chunk in enumerate(self.chunks):
            if index == self.hold_at:
                await self.release.wait()
            yield chunk
        await self.release.wait()
        self.ended = True

    async def aclose(self) -> None:
        self.closed = True


async def relay_through_the_sdk_adapter(upstream: LingeringUpstream, read_until: bytes) -> tuple[list[Any], Any, Any]:
    """Serve one relayed stream through the SDK's ASGI adapter (JS ``Request`` in, JS ``Response``
    out) and read its body until ``read_until``: the taps delivered, the adapter's request task,
    the body's reader (still open)."""
    from workers.asgi import process_request

    from memvault.api.providers import CODECS
    from memvault.api.providers.sse import RelayResponse, tap_for

    taps: list[Any] = []
    relay = RelayResponse(upstream, [(b"content-type", b"text/event-stream")], tap_for(CODECS["openai"], "text/event-stream"), taps.append)
    request = js.Request.new("https://memvault.test/v1/chat/completions", method="POST", body="{}")
    response, task = await process_request(relay, request, None, None)
    reader = response.body.getReader()
    received = b""
    while read_until not in received:
        part = await reader.read()
        assert not part.done, received
        received += bytes(part.value.to_py())
    return taps, task, reader


async def check_a_relayed_turn_is_delivered_at_its_last_event_through_the_sdk_asgi_adapter(h: Any) -> None:
    """The SDK's adapter reports no ``http.disconnect`` while the body is open, and a client that
    leaves shows only as a failed write, which waits for upstream's next byte: the turn must be
    delivered at ``[DONE]``, before the client leaves and long before upstream closes."""
    upstream = LingeringUpstream()
    taps, task, reader = await relay_through_the_sdk_adapter(upstream, b"[DONE]")
    for _ in range(100):
        if taps:
            break
        await asyncio.sleep(0.01)
    assert len(taps) == 1 and taps[0].reply().complete and taps[0].reply().text == "Hello"
    assert not upstream.ended and not task.done()
    await reader.cancel(js.Error.new("the client hung up"))
    upstream.release.set()
    await asyncio.wait_for(task, 10)  # the failed last write ends the relay quietly
    assert task.exception() is None and upstream.closed and len(taps) == 1


async def check_a_stream_left_midway_is_not_delivered_through_the_sdk_asgi_adapter(h: Any) -> None:
    upstream = LingeringUpstream(hold_at=2)
    taps, task, reader = await relay_through_the_sdk_adapter(upstream, b"lo")
    await reader.cancel(js.Error.new("the client hung up"))
    upstream.release.set()  # the model writes on; the next write fails
    await asyncio.wait_for(task, 10)
    assert task.exception() is None and upstream.closed and taps == []

CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    check_do_sql_reads_rows_blobs_and_nothing,
    check_do_sql_transaction_rolls_back_and_reraises,
    check_vault_client_speaks_plain_data_over_rpc,
    check_the_runtime_finds_one_vault_rpc_method_per_operation,
    check_vault_errors_come_back_as_domain_errors,
    check_wait_until_gets_a_promise_that_settles_after_the_work,
    check_fetch_client_round_trips_and_streams,
    check_fetch_failures_are_upstream_unavailable_without_the_url,
    check_workers_deps_store_and_search_end_to_end,
    check_workers_searches_repeat_from_kv_until_a_write,
    check_brain_over_d1_r2_and_vectorize_keeps_its_walls,
    check_stored_brain_credentials_are_read_from_d1,
    check_access_sign_in_verifies_rs256_and_fetches_keys_through_fetch,
    check_entry_serves_health_through_the_sdk_asgi_adapter,
    check_a_relayed_turn_is_delivered_at_its_last_event_through_the_sdk_asgi_adapter,
    check_a_stream_left_midway_is_not_delivered_through_the_sdk_asgi_adapter,
]

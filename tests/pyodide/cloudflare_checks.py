"""Checks of the Cloudflare binding adapters that no shared contract suite covers: the JS
conversions, D1 with the real migrations, and the limits of the bindings (Workers AI batch size,
Vectorize topK, KV's minimum TTL, R2 metadata). Run inside Pyodide by runner.py; each check takes
the harness context."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import js
from pyodide.ffi import JsException, jsnull

from memvault.adapters.cloudflare.blobs import R2BlobStore
from memvault.adapters.cloudflare.cache import KvCache
from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.database import D1Database, d1_errors
from memvault.adapters.cloudflare.embedder import WorkersAiEmbedder
from memvault.adapters.cloudflare.vector_index import VectorizeIndex
from memvault.core.errors import InvalidInput, StorageFull, StorageUnavailable, TransientStorageError, WriteRaced


async def context() -> Any:
    return js.memvaultTest


async def check_conversion_round_trips_plain_data(h: Any) -> None:
    data = {"a": None, "b": b"\x00\xffbin", "c": [1, 2.5, "ü", None], "d": {"nested": True}, "e": ""}
    back = to_py(to_js(data))
    assert back == data, back
    assert js.Object.prototype.toString.call(to_js({"k": 1})) == "[object Object]"
    assert to_py(jsnull) is None and to_py(js.undefined) is None
    assert to_py(js.Map.new(to_js([["k", 1]]))) == {"k": 1}
    assert to_py(js.Uint8Array.new(to_js([1, 2])).buffer) == b"\x01\x02"
    dated = to_py(js.Object.fromEntries(to_js([["when", js.Date.new(0)], ["n", None]])))
    assert dated["n"] is None and str(js.Object.prototype.toString.call(dated["when"])) == "[object Date]"


async def check_d1_has_the_migrations_and_fts(h: Any) -> None:
    db = D1Database(await h.freshD1())
    applied = [r["name"] for r in await db.query("SELECT name FROM d1_migrations ORDER BY id")]
    assert applied == list(h.migrations.to_py()), applied
    tables = {r["name"] for r in await db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"memory_keys", "mirror_rows", "mirror_rows_fts", "mirror_buffers"} <= tables
    columns = [r["name"] for r in await db.query("SELECT name FROM pragma_table_info('mirror_rows')")]
    row = {c: f"v-{c}" for c in columns}
    row.update(text="Invoice INV-20931 from Acme was paid", ts_start=1.0, ts_end=2.0, token_count=7, embedding=b"\x01\x02")
    row.update({c: 0 for c in columns if c.endswith("_at") or c in {"seq", "position"}})
    placeholders = ", ".join("?" for _ in columns)
    await db.execute(f"INSERT INTO mirror_rows ({', '.join(columns)}) VALUES ({placeholders})", [row[c] for c in columns])
    hits = await db.query(
        "SELECT m.id, m.embedding FROM mirror_rows_fts f JOIN mirror_rows m ON m.rowid = f.rowid "
        "WHERE mirror_rows_fts MATCH ?",
        ['"INV-20931"'],
    )
    assert [h["id"] for h in hits] == [row["id"]], hits
    assert hits[0]["embedding"] == b"\x01\x02"


async def check_d1_batch_is_atomic_and_execute_counts(h: Any) -> None:
    db = D1Database(await h.freshD1())
    await db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, flag INTEGER)")
    assert await db.execute("INSERT INTO t VALUES (?, ?)", ["a", True]) == 1
    try:
        await db.batch([("INSERT INTO t VALUES (?, ?)", ["b", 0]), ("INSERT INTO t VALUES (?, ?)", ["a", 0])])
    except WriteRaced as exc:  # a broken constraint: a write that raced another is planned again
        assert "INSERT" not in exc.message and "'a'" not in exc.message, exc.message
    else:
        raise AssertionError("a failing batch did not raise")
    assert await db.query("SELECT k, flag FROM t ORDER BY k") == [{"k": "a", "flag": 1}]
    assert await db.execute("UPDATE t SET flag = ? WHERE k LIKE ?", [None, "%"]) == 1
    assert await db.query("SELECT flag FROM t") == [{"flag": None}]


async def check_embedder_sends_at_most_100_texts_per_call(h: Any) -> None:
    ai = h.newWorkersAi()
    embedder = WorkersAiEmbedder(ai)
    vectors = await embedder.embed([f"text number {i}" for i in range(250)])
    assert len(vectors) == 250 and all(len(v) == 768 for v in vectors)
    assert list(ai.calls.to_py()) == [100, 100, 50]
    try:
        WorkersAiEmbedder(ai, batch_size=101)
    except InvalidInput:
        pass
    else:
        raise AssertionError("a batch above the Workers AI limit was accepted")


async def check_embedder_refuses_a_short_answer(h: Any) -> None:
    class ShortAi:
        async def run(self, model: str, inputs: Any) -> Any:
            return to_js({"shape": [1, 768], "data": [[0.0] * 768]})

    try:
        await WorkersAiEmbedder(ShortAi()).embed(["one", "two"])
    except StorageUnavailable:
        return
    raise AssertionError("two texts and one vector passed unnoticed")


async def check_vectorize_beyond_20_results_still_gets_metadata(h: Any) -> None:
    index = VectorizeIndex(h.newVectorize())
    items = [(f"v{i}", [1.0, float(i) / 50, 0.5], {"scope": "a" if i % 2 else "b", "n": i}) for i in range(50)]
    await index.upsert(items)
    many = await index.query([1.0, 0.2, 0.5], top_k=40, with_metadata=True)
    assert len(many) == 40 and all(m.metadata.get("n") is not None for m in many)
    few = await index.query([1.0, 0.2, 0.5], top_k=5, metadata_filter={"scope": "a"}, with_metadata=True)
    assert len(few) == 5 and all(m.metadata["scope"] == "a" for m in few)
    await index.delete([m.id for m in few])
    again = await index.query([1.0, 0.2, 0.5], top_k=20, metadata_filter={"scope": "a"})
    assert not {m.id for m in few} & {m.id for m in again}


async def check_r2_keeps_the_content_type(h: Any) -> None:
    await h.resetR2()
    store = R2BlobStore(h.env.BLOBS)
    await store.put("bodies/one.md", b"# Title\n", content_type="text/markdown")
    head = await h.env.BLOBS.head("bodies/one.md")
    assert head.httpMetadata.contentType == "text/markdown"
    assert await store.get("bodies/one.md") == b"# Title\n"


async def check_kv_minimum_ttl_is_why_the_adapter_rounds_up(h: Any) -> None:
    try:
        await h.env.CACHE.put("raw-ttl", "x", to_js({"expirationTtl": 5}))
    except JsException:
        pass
    else:
        raise AssertionError("KV accepted a 5 s TTL: the adapter's rounding up may be unnecessary")
    cache = KvCache(h.env.CACHE)
    await cache.put("rounded-ttl", "x", ttl_seconds=5)
    listed = to_py(await h.env.CACHE.list(to_js({"prefix": "rounded-ttl"})))
    assert listed["keys"][0].get("expiration"), listed


async def check_d1_errors_worth_a_retry_are_told_apart(h: Any) -> None:
    cases = {
        "D1_ERROR: Network connection lost.": TransientStorageError,
        "D1_ERROR: Durable Object reset because its code was updated.": TransientStorageError,
        "D1_ERROR: D1 DB is overloaded. Too many requests queued.": TransientStorageError,
        "D1_ERROR: database or disk is full: SQLITE_FULL": StorageFull,
        "D1_ERROR: no such table: nowhere: SQLITE_ERROR": StorageUnavailable,
    }
    for message, kind in cases.items():
        throw = js.Function.new("message", "throw new Error(message)")
        try:
            with d1_errors():
                throw(message)
        except (StorageUnavailable, StorageFull) as exc:
            assert type(exc) is kind, (message, type(exc))
        else:
            raise AssertionError(f"{message!r} was not raised")


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    check_conversion_round_trips_plain_data,
    check_d1_has_the_migrations_and_fts,
    check_d1_batch_is_atomic_and_execute_counts,
    check_d1_errors_worth_a_retry_are_told_apart,
    check_embedder_sends_at_most_100_texts_per_call,
    check_embedder_refuses_a_short_answer,
    check_vectorize_beyond_20_results_still_gets_metadata,
    check_r2_keeps_the_content_type,
    check_kv_minimum_ttl_is_why_the_adapter_rounds_up,
]

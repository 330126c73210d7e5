#!/usr/bin/env python3
"""The memory client from the bot's side: 50 chat agents at once, each a LazyMemory over its own
SQLite storage, against a local memvault this script starts (default settings, real embedder),
over the HTTP transport. Prints each figure beside its target:

- agent start: constructing LazyMemory and its first get() (which answers from storage at once);
- fresh data: from the start until get() answers with memvault's own page;
- save -> ack: from save() (then flush()) until memvault acknowledged the save, each chat saving
  its turns one after another while the other chats do the same;
- read cache: memvault's hit rate on a read-heavy replay — each chat writes a turn, then its bot
  reads the chat's context (the same search) six times before the next write.

    .venv/bin/python scripts/bench_client.py [--sessions 50] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import LocalServer, local_memvault, p50_p95, print_figures  # noqa: E402

from memvault.adapters.local.background import AsyncioBackground  # noqa: E402
from memvault.adapters.local.http_client import HttpxClient  # noqa: E402
from memvault.adapters.local.sqlite_sql import SqliteSql  # noqa: E402
from memvault.client import HttpTransport, LazyMemory, MemoryClient  # noqa: E402

SEEDED_TURNS = 10
SAVES_PER_CHAT = 5
REPLAY_ROUNDS = 4
READS_PER_WRITE = 6


def turn(chat: int, n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"Chat {chat}, note {n}: the parcel for order {chat * 100 + n} arrives on day {n % 28 + 1}."},
        {"role": "assistant", "content": f"Noted for chat {chat}: order {chat * 100 + n} on day {n % 28 + 1}."},
    ]


async def start_agent(client: MemoryClient, storage: SqliteSql, background: AsyncioBackground, chat: int) -> tuple[float, float, LazyMemory]:
    """(ms to construct and first get, ms until get answers with fresh data, the agent). The
    storage is opened beforehand, as a Durable Object's is there before its object starts."""
    started = time.perf_counter()
    memory = LazyMemory(client, storage, background, f"bench-chat-{chat}")
    memory.get()
    start_ms = (time.perf_counter() - started) * 1000
    if not (await memory.fresh(60.0)).fresh:
        raise SystemExit("an agent never got memvault's answer")
    return start_ms, (time.perf_counter() - started) * 1000, memory


async def save_until_acked(memory: LazyMemory, chat: int, n: int) -> float:
    started = time.perf_counter()
    memory.save(turn(chat, n))
    delivery = await memory.flush()
    if delivery.queued:
        raise SystemExit(f"a save stayed queued: {delivery}")
    return (time.perf_counter() - started) * 1000


async def saves(memory: LazyMemory, chat: int) -> list[float]:
    """A chat's turns one after another, as a bot saves them: each acknowledged before the next."""
    return [await save_until_acked(memory, chat, 10 + n) for n in range(SAVES_PER_CHAT)]


async def replay(memory: LazyMemory, client: MemoryClient, chat: int) -> None:
    for n in range(REPLAY_ROUNDS):
        await save_until_acked(memory, chat, 100 + n)
        for _ in range(READS_PER_WRITE):
            await client.search(f"when does the parcel for chat {chat} arrive", session_id=f"bench-chat-{chat}")


def cache_kinds(server: LocalServer, key: str) -> dict[str, Any]:
    stats = httpx.get(f"{server.url}/v1/memory/stats", headers={"Authorization": f"Bearer {key}"}, timeout=30).json()
    return dict(stats["cache"]["kinds"])


async def run(server: LocalServer, sessions: int, scratch: Path) -> list[tuple[str, str, str]]:
    key = server.create_key("bench-client")
    http = HttpxClient(httpx.AsyncClient(timeout=60, trust_env=False, limits=httpx.Limits(max_connections=sessions * 2)))
    client = MemoryClient(HttpTransport(http, server.url, key), timeout_seconds=60)
    await asyncio.gather(*(client.save(f"bench-chat-{c}", [m for n in range(SEEDED_TURNS // 2) for m in turn(c, n)])
                           for c in range(sessions + 1)))
    background = AsyncioBackground()
    # One agent on its own first: what the same steps cost without 49 others beside it.
    _, alone_fresh, alone = await start_agent(client, SqliteSql(scratch / "alone.sqlite3"), background, sessions)
    alone_ack, _ = p50_p95(await saves(alone, sessions))
    storages = [SqliteSql(scratch / f"agent-{c}.sqlite3") for c in range(sessions)]
    started = await asyncio.gather(*(start_agent(client, storages[c], background, c) for c in range(sessions)))
    agents = [memory for _, _, memory in started]
    acks = [ms for chat_acks in await asyncio.gather(*(saves(agents[c], c) for c in range(sessions))) for ms in chat_acks]
    before = cache_kinds(server, key)
    await asyncio.gather(*(replay(agents[c], client, c) for c in range(sessions)))
    after = cache_kinds(server, key)
    await background.drain()
    await http.aclose()

    searches = {k: after["memory-search"][k] - before.get("memory-search", {}).get(k, 0) for k in ("hits", "misses")}
    rate = searches["hits"] / max(1, searches["hits"] + searches["misses"])
    start_p50, start_p95 = p50_p95([s for s, _, _ in started])
    fresh_p50, fresh_p95 = p50_p95([f for _, f, _ in started])
    ack_p50, ack_p95 = p50_p95(acks)
    return [
        ("agent start (construct + first get)", f"p50 {start_p50:.2f} ms, p95 {start_p95:.2f} ms", "< 50 ms"),
        ("start until get returns fresh data", f"p50 {fresh_p50:.1f} ms, p95 {fresh_p95:.1f} ms", "< 100 ms"),
        ("save -> memvault ack after flush", f"p50 {ack_p50:.1f} ms, p95 {ack_p95:.1f} ms ({len(acks)} saves)", "< 200 ms"),
        (f"read cache, {READS_PER_WRITE} reads per write", f"{rate:.1%} of searches ({searches['hits']} hits, "
         f"{searches['misses']} misses)", "> 80 %"),
        ("one agent alone: fresh data / save -> ack", f"{alone_fresh:.1f} ms / p50 {alone_ack:.1f} ms", "(reference)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--embedder", default="minilm", help="the local server's embedder (the product default: minilm)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-client-") as scratch, local_memvault(args.embedder) as server:
        rows = asyncio.run(run(server, args.sessions, Path(scratch)))
    print(f"{args.sessions} concurrent chat agents, LazyMemory over HTTP to a local memvault ({args.embedder})")
    width = max(len(name) for name, _, _ in rows)
    for name, measured, target in rows:
        print(f"  {name.ljust(width)}  {measured}  (target {target})")
    print_figures({"bench": "client", "sessions": args.sessions, **{name: measured for name, measured, _ in rows}})


if __name__ == "__main__":
    main()

"""What receipts and the secret gate at recall cost one call, measured in process on the local
stores: keeping a routed call's receipt after a recall that fills the router's default budget,
and the gate over the recalled items (each text judged anew, and judged again from the verdicts
remembered by content). The router benchmark (`bench_router.py`) measures the whole call.

    .venv/bin/python scripts/bench_receipts.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import p50_p95, print_figures  # noqa: E402

from memvault.core.credentials.keys import create_key  # noqa: E402
from memvault.core.memory.read.search import search_memory  # noqa: E402
from memvault.core.memory.write import store_conversation  # noqa: E402
from memvault.core.models import Message  # noqa: E402
from memvault.core.receipts.record import keep_routed  # noqa: E402
from memvault.core.redaction import redact  # noqa: E402
from memvault.core.redaction.recall import recalled  # noqa: E402
from memvault.core.settings import load_settings  # noqa: E402
from memvault.runtime.local import build_local_deps, close_local_deps  # noqa: E402

TARGET_KEEP_P50_MS = 2.0  # a receipt should cost far less than the query embedding (~10 ms)
ROUNDS = 200
TOPICS = "garden harbour violin glacier orchid falcon quartz willow lantern meadow".split()


def said(count: int, now: float) -> list[Message]:
    return [
        Message("user" if i % 2 == 0 else "assistant",
                f"Note {i}: the {TOPICS[i % len(TOPICS)]} plan needs the {TOPICS[(i * 3) % len(TOPICS)]} done by "
                f"Friday, and my sister said the {TOPICS[(i * 7) % len(TOPICS)]} can wait until the spring.",
                now - 86400 + i * 60, f"m{i}")
        for i in range(count)
    ]


async def measure() -> None:
    with tempfile.TemporaryDirectory() as data:
        deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": data, "MEMVAULT_EMBEDDER": "hash"}))
        try:
            key, _ = await create_key(deps.db, "bench", deps.clock())
            await store_conversation(deps, key.id, said(400, deps.clock()))
            budget = deps.settings.context_limit_tokens
            found = await search_memory(deps, key.id, "what did my sister say about the garden plan?", budget_tokens=budget)
            keeps = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                await keep_routed(deps, key.id, "openai", "what did my sister say?", None, budget, found, 10.0,
                                  len(found.items), "ok")
                keeps.append((time.perf_counter() - started) * 1000)
            texts = [item.text for item in found.items]
            fresh, remembered = [], []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                for text in texts:
                    redact(text)
                fresh.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                for text in texts:
                    recalled(text)
                remembered.append((time.perf_counter() - started) * 1000)
        finally:
            await close_local_deps(deps)
    ids = sum(len(item.source_ids) for item in found.items)
    print(f"a recall of {len(found.items)} items ({found.tokens} tokens, {ids} message ids), {ROUNDS} rounds")
    p50, p95 = p50_p95(keeps)
    print(f"keeping its receipt:          p50 {p50:.2f} ms  p95 {p95:.2f} ms  (target p50 <= {TARGET_KEEP_P50_MS})")
    print(f"the gate over its items:      p50 {statistics.median(fresh):.2f} ms (each text judged anew)")
    print(f"the gate, verdicts remembered: p50 {statistics.median(remembered):.3f} ms")
    print_figures({"bench": "receipts", "keep_p50_ms": p50, "keep_p95_ms": p95,
                   "gate_fresh_p50_ms": statistics.median(fresh), "gate_remembered_p50_ms": statistics.median(remembered)})


if __name__ == "__main__":
    asyncio.run(measure())

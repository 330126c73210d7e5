"""Store and search latency of memvault's core as one memory key grows (in-process, local adapters).

For each size (chunks in the key) it fills the key up to that size, then measures with the real
MiniLM embedder: store calls of one user+assistant exchange, searches (query embedding included),
a search right after a write (the vault's vector set is rebuilt then), and concurrent throughput.

Bulk fill: embedding hundreds of thousands of rows with MiniLM on a laptop takes hours, so past
`--real-fill-chunks` the fill uses POOLED vectors: real MiniLM vectors of a few hundred synthetic
texts, picked per row by a hash of its text and jittered. They cost the store and search paths
exactly what real vectors cost, but rank like noise. Their model id is MiniLM's so that the real
embedder can keep writing to the same vault. The output says which rows were filled how.

    .venv/bin/python scripts/bench_latency.py --sizes 1000,10000
    .venv/bin/python scripts/bench_latency.py --sizes 1000,10000,100000 --json latency.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench_common import summary

KEY_ID = "bench-latency"
NAMES = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi", "Liam")
PLACES = ("Lisbon", "Osaka", "Denver", "Nairobi", "Oslo", "Lima", "Hanoi", "Perth", "Quebec", "Seville")
FILLER = tuple("the a to and of in for with on at my your it is was we they this that about from".split(" "))
SYLLABLES = tuple("ka lo mi ne ru sa te vo zi pa qu ri mo len dar tis bel cor fen gar hul jor kin mar nol".split(" "))


def make_vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    """Invented words of 2-3 syllables: varied text with a realistic long tail, and no network."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3)))))
    vocabulary = sorted(words)
    rng.shuffle(vocabulary)  # so that frequency rank is unrelated to spelling
    return vocabulary


class TextSource:
    """Deterministic synthetic chat: names, places, numbers, and words drawn Zipf-like."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._vocabulary = make_vocabulary(self._rng)
        # Cumulative weights make each draw a bisection instead of a pass over the vocabulary.
        self._cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(self._vocabulary))))
        self._count = 0

    def _word(self) -> str:
        roll = self._rng.random()
        if roll < 0.35:
            return self._rng.choice(FILLER)
        if roll < 0.40:
            return self._rng.choice(NAMES + PLACES)
        if roll < 0.43:
            return str(self._rng.randint(2, 2030))
        return self._rng.choices(self._vocabulary, cum_weights=self._cumulative)[0]

    def sentence(self, low: int, high: int) -> str:
        words = [self._word() for _ in range(self._rng.randint(low, high))]
        return " ".join(words).capitalize() + self._rng.choice((".", ".", "?", "!"))

    def message(self, role: str, timestamp: float) -> Any:
        from memvault.core.models import Message

        self._count += 1
        text = " ".join(self.sentence(6, 22) for _ in range(self._rng.randint(1, 4)))
        return Message(role=role, content=text, timestamp=timestamp, id=f"m{self._count}")

    def exchange(self, timestamp: float) -> list[Any]:
        return [self.message("user", timestamp), self.message("assistant", timestamp + 1.0)]

    def query(self) -> str:
        return self.sentence(4, 9)


class PooledVectors:
    """Bulk-fill stand-in for MiniLM (see the module docstring): real vectors, reused and jittered."""

    def __init__(self, model_id: str, pool: Sequence[Sequence[float]]) -> None:
        import numpy as np

        self._model_id = model_id
        self._pool = np.asarray(pool, dtype=np.float32)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return int(self._pool.shape[1])

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            rng = np.random.default_rng(seed)
            vector = self._pool[seed % len(self._pool)] + rng.normal(0.0, 0.03, self.dimension).astype(np.float32)
            vectors.append((vector / np.linalg.norm(vector)).tolist())
        return vectors


@dataclass
class Fill:
    chunks: int = 0
    rows: int = 0
    messages: int = 0
    real_chunks: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: {"real": 0.0, "pooled": 0.0})
    clock: float = 0.0


async def fill_to(target: int, fill: Fill, real: Any, pooled: Any, source: TextSource, real_limit: int) -> None:
    from memvault.core.memory.write import store_conversation

    while fill.chunks < target:
        use_real = fill.chunks < real_limit
        messages = [m for _ in range(10) for m in source.exchange(fill.clock)]
        fill.clock += 60.0
        started = time.perf_counter()
        result = await store_conversation(real if use_real else pooled, KEY_ID, messages)
        fill.seconds["real" if use_real else "pooled"] += time.perf_counter() - started
        fill.chunks += result.chunks_stored
        fill.real_chunks += result.chunks_stored if use_real else 0
        fill.rows += result.chunks_stored + result.rows_stored
        fill.messages += len(messages)


async def timed(work: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await work
    return (time.perf_counter() - started) * 1000.0, result


async def measure(deps: Any, fill: Fill, source: TextSource, args: argparse.Namespace) -> dict[str, Any]:
    from memvault.core.memory.read import search_memory
    from memvault.core.memory.write import store_conversation

    def search(query: str) -> Any:
        return search_memory(deps, KEY_ID, query, budget_tokens=args.budget, now=fill.clock + 60.0)

    store_ms, after_write_ms = [], []
    for _ in range(args.stores):
        elapsed, result = await timed(store_conversation(deps, KEY_ID, source.exchange(fill.clock)))
        fill.clock += 60.0
        fill.chunks += result.chunks_stored
        fill.rows += result.chunks_stored + result.rows_stored
        store_ms.append(elapsed)
        after_write_ms.append((await timed(search(source.query())))[0])
    search_ms, metrics = [], {"embed_ms": [], "total_ms": [], "vault_ms": []}
    winners: dict[str, int] = {}  # which source answered: the vault, or the mirror when the vault was slow
    for _ in range(args.queries):
        elapsed, result = await timed(search(source.query()))
        search_ms.append(elapsed)
        metrics["embed_ms"].append(result.metrics.get("embed_ms", float("nan")))
        metrics["total_ms"].append(result.metrics.get("total_ms", float("nan")))
        vaults = result.metrics.get("vaults", {})
        metrics["vault_ms"] += [v["vault_ms"] for v in vaults.values() if v.get("vault_ms") is not None]
        for answer in vaults.values():
            winners[str(answer.get("winner"))] = winners.get(str(answer.get("winner")), 0) + 1
    queries = [source.query() for _ in range(args.queries)]
    started = time.perf_counter()
    for start in range(0, len(queries), args.concurrency):
        await asyncio.gather(*(search(q) for q in queries[start : start + args.concurrency]))
    throughput = len(queries) / (time.perf_counter() - started)
    return {
        "chunks": fill.chunks,
        "rows": fill.rows,
        "chunks_with_real_vectors": fill.real_chunks,
        "store_ms": summary(store_ms),
        "store_exchanges_per_s": 1000.0 * len(store_ms) / sum(store_ms),
        "search_ms": summary(search_ms),
        "search_after_write_ms": summary(after_write_ms),
        "search_metrics_ms": {name: summary(values) for name, values in metrics.items()},
        "search_answered_by": winners,
        f"searches_per_s_at_concurrency_{args.concurrency}": throughput,
        "fill_seconds": dict(fill.seconds),
    }


async def run(args: argparse.Namespace, data_dir: Path) -> list[dict[str, Any]]:
    from memvault.core.settings import load_settings
    from memvault.runtime.local import build_local_deps, close_local_deps

    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "minilm"}))
    source = TextSource(seed=args.seed)
    pool = await deps.embedder.embed([source.sentence(8, 40) for _ in range(args.pool)])
    pooled = replace(deps, embedder=PooledVectors(deps.embedder.model_id, pool))
    fill = Fill(clock=time.time() - 30 * 86400.0)
    results = []
    try:
        for size in args.sizes:
            await fill_to(size, fill, deps, pooled, source, args.real_fill_chunks)
            result = await measure(deps, fill, source, args)
            results.append(result)
            print_result(result)
            if args.json:  # after every size, so a long run that is stopped still leaves its numbers
                args.json.write_text(json.dumps({"settings": settings_of(args), "results": results}, indent=2))
    finally:
        await close_local_deps(deps)
    return results


def print_result(result: dict[str, Any]) -> None:
    s, q, w = result["store_ms"], result["search_ms"], result["search_after_write_ms"]
    throughput = next(v for k, v in result.items() if k.startswith("searches_per_s"))
    print(
        f"{result['chunks']:>7} chunks {result['rows']:>8} rows ({result['chunks_with_real_vectors']} chunks real) | "
        f"store p50 {s['p50']:.1f} p95 {s['p95']:.1f} ms | search p50 {q['p50']:.1f} p95 {q['p95']:.1f} ms | "
        f"after a write p50 {w['p50']:.1f} p95 {w['p95']:.1f} ms | {throughput:.1f} searches/s | "
        f"answered by {result['search_answered_by']} | fill s {result['fill_seconds']}",
        flush=True,
    )


def print_growth(results: Sequence[dict[str, Any]]) -> None:
    if len(results) < 2:
        return
    base = results[0]
    for result in results[1:]:
        chunks = result["chunks"] / base["chunks"]
        search = result["search_ms"]["p50"] / base["search_ms"]["p50"]
        print(f"x{chunks:.1f} chunks -> search p50 x{search:.2f}")
    real = base["fill_seconds"]["real"]
    if base["chunks_with_real_vectors"] and real:
        rate = base["chunks_with_real_vectors"] / real
        print(f"fill with real MiniLM: {rate:.1f} chunks/s -> 100k chunks would take ~{100_000 / rate / 3600:.1f} h")


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    return {**vars(args), "json": str(args.json), "bulk_vectors": "pooled MiniLM vectors past --real-fill-chunks"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000", help="chunk counts to measure at, ascending")
    parser.add_argument("--real-fill-chunks", type=int, default=200, help="chunks filled with real MiniLM vectors")
    parser.add_argument("--pool", type=int, default=512, help="real vectors in the bulk-fill pool")
    parser.add_argument("--stores", type=int, default=40, help="store calls measured per size")
    parser.add_argument("--queries", type=int, default=100, help="searches measured per size")
    parser.add_argument("--concurrency", type=int, default=4, help="searches in flight for the throughput run")
    parser.add_argument("--budget", type=int, default=1000, help="budget_tokens of each search")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(size) for size in args.sizes.split(","))
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memvault-latency-") as data_dir:
        results = asyncio.run(run(args, Path(data_dir)))
    print_growth(results)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What the memory router injects, and what search finds, on four small case sets of our own
(tests/data/recall/):

- repeats: a fact said once long ago, then the same question asked eight times through the router
  (each turn stored, with an unhelpful answer); on the ninth ask, is the fact injected, and how many
  copies of the question and of any other text does the context hold?
- follow-ups: a short conversation whose last message leans on the one before ("and her sister?");
  is the memory that answers it injected, within a small context limit?
- recency: the same kind of fact said sixty days ago and this morning; does this morning's rank first?
- paraphrase: a fact said once in a short conversation (a new key each, so the whole conversation
  is still in the pending buffer), asked in words the fact does not use; is it among the first three
  results of a search? Asked again once the buffer is flushed into a chunk, as stored memory. The
  target is 90 % while pending.

Runs in process on the local composition root with the real embedder and the product's defaults
(only the context limit of each call is set, as a caller sets it). Prints each rate. A sweep of
recency's share replaces one tuning constant and says so in its output (``--recency-weight 0``).
To measure another revision of memvault on the same cases, put its ``src`` first on the path:

    .venv/bin/python scripts/bench_recall_cases.py [--embedder minilm|hash] [--recency-weight W]
    PYTHONPATH=/path/to/other/checkout/src .venv/bin/python scripts/bench_recall_cases.py
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "recall"
NOW = 1_800_000_000.0
DAY = 86400.0
FILLER = [
    "The weather was grey all week but the weekend looks sunny.", "I finally fixed the squeaky hinge on the shed door.",
    "Traffic on the ring road was terrible this afternoon.", "We watched a documentary about octopuses last night.",
    "The library extended its opening hours on Saturdays.", "I need to renew the car insurance before the end of the month.",
    "The new coffee place near the station does good flat whites.", "My laptop battery drains faster since the update.",
    "The tomatoes on the balcony are finally turning red.", "We're thinking about repainting the living room a warmer colour.",
    "The gym changed its booking system to an app.", "I lost my umbrella on the tram again.",
    "The neighbours are having their roof redone next week.", "I signed up for a pottery class that starts in autumn.",
    "The supermarket was out of oat milk this morning.", "Our streaming subscription price went up.",
    "I've been sleeping better since I stopped drinking coffee after lunch.", "The recycling collection moved to Tuesdays.",
    "A friend recommended a podcast about urban planning.", "The printer at work jams whenever you print double-sided.",
]


def _text_of(line: str) -> str:
    """The remembered text of a context line: "text" (the user's) or "role: text" (anyone else's)."""
    label, _, text = line.partition(": ")
    return text if label in ("assistant", "system", "tool") else line


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CASES / name).read_text().splitlines() if line.strip()]


async def run(embedder: str, recency_weight: float | None = None) -> dict[str, Any]:
    from memvault.core.credentials.keys import create_key
    from memvault.core.memory.chat_calls import Conversation, MemoryOptions, Reply, Turn, context_lines, prepare, record
    from memvault.core.memory.read.search import search_memory
    from memvault.core.memory.write import flush_pending, store_conversation
    from memvault.core.models import Message
    from memvault.core.settings import load_settings
    from memvault.core.tuning import Tuning
    from memvault.runtime.local import build_local_deps, close_local_deps

    clock = {"now": NOW}
    with tempfile.TemporaryDirectory() as data:
        # Settings come from the environment as the server's do; tuning is the product's unless swept.
        environ = {**os.environ, "MEMVAULT_DATA_DIR": data, "MEMVAULT_EMBEDDER": embedder}
        tuning = Tuning() if recency_weight is None else Tuning(recency_weight=recency_weight)
        deps = build_local_deps(load_settings(environ), tuning)
        deps = dataclasses.replace(deps, clock=lambda: clock["now"])

        def options(limit: int) -> MemoryOptions:
            return MemoryOptions("auto", True, True, limit, None)

        async def key() -> str:
            return (await create_key(deps.db, "cases", NOW))[0].id

        async def say(key_id: str, texts: list[str], when: float) -> None:
            messages = [Message("user", text, when + i, uuid.uuid4().hex) for i, text in enumerate(texts)]
            await store_conversation(deps, key_id, messages)

        def ask(text: str, before: tuple[tuple[str, str], ...] = ()) -> Conversation:
            return Conversation((*(Turn(role, said) for role, said in before), Turn("user", text)))

        # Repeats: one key per case, so each case is judged on its own.
        repeats = load("repeats.jsonl")
        found = question_copies = repeated_lines = 0
        for case in repeats:
            key_id = await key()
            await say(key_id, [*FILLER, case["fact"]], NOW - 30 * DAY)
            for attempt in range(8):
                clock["now"] = NOW + attempt * 60
                await record(deps, key_id, ask(case["question"]), Reply("I'm not sure, could you remind me?"), options(800))
            clock["now"] = NOW + 3600
            block = (await prepare(deps, key_id, ask(case["question"]), options(800))).context
            lines = [_text_of(line) for line in context_lines(block)]
            found += case["expect"] in block
            question_copies += sum(1 for line in lines if line.strip() == case["question"])
            repeated_lines += sum(n - 1 for n in Counter(lines).values() if n > 1)
        clock["now"] = NOW

        # Follow-ups: all cases' memories in one key, each group said on its own day among filler,
        # a context limit of 100 tokens.
        followups = load("followups.jsonl")
        key_id = await key()
        groups = list(dict.fromkeys(tuple(case["memory"]) for case in followups))
        for day, group in enumerate(groups):
            await say(key_id, [*FILLER[day % 4 :: 4], *group], NOW - (5 + day) * DAY)
        followed = alone = 0
        for case in followups:
            before = tuple((role, text) for role, text in case["turns"][:-1])
            last = case["turns"][-1][1]
            followed += case["expect"] in (await prepare(deps, key_id, ask(last, before), options(100))).context
            alone += case["expect"] in (await prepare(deps, key_id, ask(last), options(100))).context

        # Recency: each pair in its own key; does this morning's version rank above the old one?
        recency = load("recency.jsonl")
        first = 0
        for case in recency:
            key_id = await key()
            await say(key_id, [*FILLER, case["old"]], NOW - 60 * DAY)
            await say(key_id, [case["new"]], NOW - 3 * 3600)
            ranked = [item.text for item in (await search_memory(deps, key_id, case["question"], budget_tokens=800)).items]
            new = next((i for i, text in enumerate(ranked) if text == case["new"]), None)
            old = next((i for i, text in enumerate(ranked) if text == case["old"]), None)
            first += new is not None and (old is None or new < old)

        # Paraphrase: each short conversation in its own key, asked while pending, then once stored.
        paraphrase = load("paraphrase.jsonl")
        pending_top3 = stored_top3 = 0
        for case in paraphrase:
            key_id = await key()
            said = [Message(role, text, NOW - 600 + i, uuid.uuid4().hex) for i, (role, text) in enumerate(case["conversation"])]
            await store_conversation(deps, key_id, said)
            top = [item.text for item in (await search_memory(deps, key_id, case["question"])).items[:3]]
            pending_top3 += case["fact"] in top
            await flush_pending(deps, key_id)
            top = [item.text for item in (await search_memory(deps, key_id, case["question"])).items[:3]]
            stored_top3 += case["fact"] in top
        await close_local_deps(deps)
    return {
        "repeats: fact injected on the ninth ask": f"{found}/{len(repeats)}",
        "repeats: copies of the question injected": question_copies,
        "repeats: lines injected twice": repeated_lines,
        "follow-ups: answer injected (the conversation as sent)": f"{followed}/{len(followups)}",
        "follow-ups: answer injected (the last message alone)": f"{alone}/{len(followups)}",
        "recency: this morning's version ranked above the old one": f"{first}/{len(recency)}",
        "paraphrase: fact among the first 3 results while pending (target >= 90 %)": _share(pending_top3, len(paraphrase)),
        "paraphrase: fact among the first 3 results once stored in a chunk": _share(stored_top3, len(paraphrase)),
    }


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f} %)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--recency-weight", type=float, default=None,
                        help="sweep: replace Tuning.recency_weight (default: the product's)")
    args = parser.parse_args()
    from memvault.core.tuning import Tuning

    product = Tuning().recency_weight
    print("tuning: the product's" if args.recency_weight is None
          else f"tuning: recency_weight={args.recency_weight} (the product runs {product})")
    from bench_common import print_figures

    figures = asyncio.run(run(args.embedder, args.recency_weight))
    for name, value in figures.items():
        print(f"{name}: {value}")
    print_figures({"bench": "recall_cases", "embedder": args.embedder, **figures})


if __name__ == "__main__":
    main()

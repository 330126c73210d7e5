#!/usr/bin/env python3
"""Answers from the brain and from conversation memory, through the memory router's recall, for a
memory key granted brain scopes (tests/data/answers/):

- brain cases: a fact that lives only in the brain (a topic note's line), asked in the user's words;
- memory cases: something said once in conversation (days to weeks ago, among other turns and the
  assistant's answers), asked later.

Every case shares one key and one brain, so each question competes with all the others' facts and
messages. For each context budget, each question goes through the router's recall exactly as a
provider route calls it, and a case counts as answered when its answer is in the injected block.
Prints each rate beside its target, the same memory questions for the key without a grant (facts
must not push conversation memory out), and a JSON line last. Runs in process on the local
composition root with the real embedder and the product's defaults:

    .venv/bin/python scripts/bench_answers.py [--embedder minilm|hash] [--budgets 150,400,1000]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "data" / "answers"
NOW = 1_800_000_000.0
DAY = 86400.0
BUDGETS = (150, 400, 1000)
SCOPES = ("business", "family", "personal", "shared")
# The rate each kind must reach at each budget.
TARGETS = {"brain": {150: 0.80, 400: 0.90, 1000: 0.90}, "memory": {150: 0.70, 400: 0.85, 1000: 0.90}}
REPLY = "Thanks for telling me, I'll keep that in mind."


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (CASES / name).read_text().splitlines() if line.strip()]


async def measure(embedder: str, budgets: tuple[int, ...], every: int = 1) -> dict[str, Any]:
    """Rates per kind and budget over every ``every``-th case (1: all of them)."""
    from memvault.core import brain
    from memvault.core.answers import prepare
    from memvault.core.credentials.keys import create_key
    from memvault.core.memory.chat_calls import Conversation, MemoryOptions, Turn
    from memvault.core.memory.write import store_conversation
    from memvault.core.models import Message
    from memvault.core.settings import load_settings
    from memvault.runtime.local import build_local_deps, close_local_deps

    brain_cases, memory_cases = load("brain_cases.jsonl"), load("memory_cases.jsonl")
    with tempfile.TemporaryDirectory() as data:
        environ = {**os.environ, "MEMVAULT_DATA_DIR": data, "MEMVAULT_EMBEDDER": embedder}
        deps = dataclasses.replace(build_local_deps(load_settings(environ)), clock=lambda: NOW)
        try:
            granted, _ = await create_key(deps.db, "answers", NOW, brain_scopes=SCOPES)
            plain, _ = await create_key(deps.db, "memory only", NOW)
            writer = brain.Credential("notes", frozenset(SCOPES), True)
            facts = [{"content": c["fact"], "scope": c["scope"], "source": f"notes/{i:02d}.md", "valid_from": NOW - 90 * DAY}
                     for i, c in enumerate(brain_cases)]
            await brain.WRITE_FACTS.perform(deps, writer, {"facts": facts, "bands": False})
            for key in (granted, plain):
                for case in memory_cases:
                    said = NOW - case["days_ago"] * DAY
                    turn = uuid.uuid4().hex
                    await store_conversation(deps, key.id, [Message("user", case["said"], said, f"{turn}-u"),
                                                            Message("assistant", REPLY, said + 1, f"{turn}-a")])

            async def answered(key: Any, case: dict[str, Any], budget: int) -> bool:
                options = MemoryOptions("auto", True, True, budget, None)
                block = (await prepare(deps, key, Conversation((Turn("user", case["question"]),)), options)).context
                return bool(case["answer"] in block)

            rates: dict[str, dict[int, float]] = {"brain": {}, "memory": {}, "memory_without_grant": {}}
            for budget in budgets:
                for kind, key, cases in (("brain", granted, brain_cases), ("memory", granted, memory_cases),
                                         ("memory_without_grant", plain, memory_cases)):
                    asked = cases[::every]
                    hits = [await answered(key, case, budget) for case in asked]
                    rates[kind][budget] = round(sum(hits) / len(asked), 3)
            return {"cases": {"brain": len(brain_cases[::every]), "memory": len(memory_cases[::every])}, "rates": rates}
        finally:
            await close_local_deps(deps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    args = parser.parse_args()
    budgets = tuple(int(b) for b in args.budgets.split(","))
    found = asyncio.run(measure(args.embedder, budgets))
    print(f"cases: {found['cases']['brain']} brain-only, {found['cases']['memory']} conversation-only ({args.embedder})")
    for kind in ("brain", "memory", "memory_without_grant"):
        for budget in budgets:
            rate = found["rates"][kind][budget]
            target = TARGETS.get(kind, {}).get(budget)
            beside = f"target >= {target:.2f}" if target is not None else "baseline (no grant)"
            print(f"{kind:>22} @ {budget:>5} tokens: {rate:.3f}   {beside}")
    from bench_common import print_figures

    print_figures({"bench": "answers", "embedder": args.embedder, **found})


if __name__ == "__main__":
    main()

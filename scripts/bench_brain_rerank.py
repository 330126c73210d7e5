#!/usr/bin/env python3
"""Does the brain's rerank put the current fact above a stale one? Pairs of facts about one thing,
a stale one true two years ago and a current one from last week, both still current rows (nobody
marked the old one superseded); questions about each thing. Prints how often hybrid search ranks
the current fact first, with the product's rerank on and off (a sweep of ``Tuning.brain_rerank``;
on is the default). Real core, local stores, the local embedder, a temporary data folder.

    .venv/bin/python scripts/bench_brain_rerank.py
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time

from memvault.core import brain
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps

TOKEN = "bench-rerank-token"
DAY = 86400.0
# (stale fact, current fact, question)
PAIRS = [
    ("Mildred's GP is Dr Patel at Oak Lane surgery", "Mildred's GP is Dr Okafor at Oak Lane surgery", "Who is Mildred's GP?"),
    ("The shop opens at 9 on Saturdays", "The shop opens at 10 on Saturdays", "When does the shop open on Saturday?"),
    ("The accountant is Jane Frost at Frost and Co", "The accountant is Tom Reid at Reid Partners", "Who is our accountant?"),
    ("The car insurance is with Aviva", "The car insurance is with Direct Line", "Who insures the car?"),
    ("Anna works at the library on Mondays", "Anna works at the library on Thursdays", "Which day does Anna work at the library?"),
    ("The wifi password is on the fridge magnet", "The wifi password is in the kitchen drawer", "Where is the wifi password?"),
    ("Rent is 950 pounds a month", "Rent is 1000 pounds a month", "How much is the rent?"),
    ("The boiler is serviced by Hartley Heating", "The boiler is serviced by Watson Gas", "Who services the boiler?"),
    ("Jo's dentist is on Mill Road", "Jo's dentist is on Station Street", "Where is Jo's dentist?"),
    ("The van is parked at the Elm Street garage", "The van is parked at the Kings Yard depot", "Where is the van parked?"),
]


async def run(rerank: bool) -> float:
    credentials = {hashlib.sha256(TOKEN.encode()).hexdigest(): {"name": "bench", "scopes": ["family"], "writer": True}}
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings({"MEMVAULT_DATA_DIR": data_dir, "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials)})
        deps = build_local_deps(settings, Tuning(brain_rerank=rerank))
        try:
            credential = await brain.auth_of(TOKEN, deps)
            now = time.time()
            current_ids = []
            for stale, current, _ in PAIRS:
                await brain.WRITE_FACTS.perform(deps, credential, {"content": stale, "valid_from": now - 730 * DAY})
                written = await brain.WRITE_FACTS.perform(deps, credential, {"content": current, "valid_from": now - 7 * DAY})
                current_ids.append(written.ids[0])
            first = 0
            for (_, _, question), current_id in zip(PAIRS, current_ids, strict=True):
                found = await brain.SEARCH_FACTS.perform(deps, credential, {"query": question, "mode": "hybrid"})
                first += bool(found.results) and found.results[0].id == current_id
            return first / len(PAIRS)
        finally:
            await close_local_deps(deps)


async def main() -> None:
    off, on = await run(False), await run(True)
    print(f"{'stale/current pairs':28}{'current first':>16}")
    print(f"{'brain_rerank=False':28}{off:>16.2f}")
    print(f"{'brain_rerank=True (default)':28}{on:>16.2f}   target: above off, 1.00 ideal")
    from bench_common import print_figures

    print_figures({"bench": "brain_rerank", "current_first_without_rerank": off, "current_first_with_rerank": on})


if __name__ == "__main__":
    asyncio.run(main())

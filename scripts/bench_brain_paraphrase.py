#!/usr/bin/env python3
"""Keyword vs hybrid brain search on a small hand-written set: facts, then questions about them
that mostly avoid the facts' own words (paraphrases), plus a few exact-token questions where
keyword search must not lose. Runs the real core on the local stores with the real local
embedder (all-MiniLM-L6-v2 int8), in a temporary data folder.

    .venv/bin/python scripts/bench_brain_paraphrase.py [--embedder minilm|hash] [--k 5]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import tempfile
from pathlib import Path

from memvault.core import brain
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

FACTS = [
    "Mildred takes her blood pressure tablets every morning with breakfast.",
    "The boiler was serviced by Hartley Heating in March; next service is due in spring.",
    "Our car insurance renews on 14 August with Direct Line.",
    "Jo is allergic to penicillin.",
    "The Wi-Fi password for the cottage is on the fridge magnet.",
    "Invoice #20028 from Acme Roofing was paid by bank transfer.",
    "We hold 40 shares of NVDA in the ISA.",
    "The Visa card ending 4242 is the one for business travel.",
    "Dr. Okonkwo is the family dentist at the Kings Road practice.",
    "The kids' school term starts on 3 September.",
    "Quarterly VAT returns are filed by our accountant, Priya Shah.",
    "The spare house keys are kept with the neighbour at number 12.",
    "Mildred prefers to be called in the afternoon, never before 10 am.",
    "The company's fiscal year ends on 31 March.",
    "The garden hedge is trimmed twice a year, in May and September.",
    "Our broadband contract with Zen ends in January and can be cancelled then.",
    "The dog, Biscuit, needs his booster vaccination every twelve months.",
    "Sales calls are logged in the CRM within 24 hours.",
    "The passport of Jo expires in 2027.",
    "Water meter readings are submitted online every six months.",
]

# (question, index of the fact that answers it)
PARAPHRASES = [
    ("when does grandma take her heart medicine", 0),
    ("who looked after the central heating last time", 1),
    ("when is the motor policy up for renewal", 2),
    ("which antibiotic must Jo avoid", 3),
    ("how do I get online at the holiday home", 4),
    ("is the roofer's bill settled", 5),
    ("how many Nvidia shares do we own", 6),
    ("which credit card should I use for work trips", 7),
    ("who looks after our teeth", 8),
    ("when do the children go back to class", 9),
    ("who handles the sales tax paperwork", 10),
    ("I am locked out of the house, who has a copy", 11),
    ("what is a good time to phone Mildred", 12),
    ("when does the financial year close for the business", 13),
    ("how often is the shrubbery cut", 14),
    ("when can we leave our internet provider", 15),
    ("when is the puppy due for his jab", 16),
    ("how quickly must client phone conversations be recorded", 17),
    ("when does Jo need a new travel document", 18),
    ("how often do we send the utility usage numbers", 19),
]

EXACT = [
    ("invoice 20028", 5),
    ("NVDA", 6),
    ("4242", 7),
    ("Okonkwo", 8),
    ("Priya Shah", 10),
    ("Biscuit", 16),
]

TOKEN = "bench-writer"


def hit_rates(ranked: list[list[str]], wanted: list[str], k: int) -> tuple[float, float]:
    at_1 = sum(1 for found, want in zip(ranked, wanted, strict=True) if found[:1] == [want]) / len(wanted)
    at_k = sum(1 for found, want in zip(ranked, wanted, strict=True) if want in found[:k]) / len(wanted)
    return at_1, at_k


async def run(embedder: str, k: int) -> dict[str, dict[str, float]]:
    credentials = {hashlib.sha256(TOKEN.encode()).hexdigest(): {"name": "bench", "scopes": ["family"], "writer": True}}
    with tempfile.TemporaryDirectory() as data_dir:
        settings = load_settings({
            **{name: value for name, value in os.environ.items() if name.startswith("MEMVAULT_")},
            "MEMVAULT_DATA_DIR": str(Path(data_dir)),
            "MEMVAULT_EMBEDDER": embedder,
            "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials),
        })
        deps = build_local_deps(settings)
        try:
            credential = await brain.auth_of(TOKEN, deps)
            written = await brain.WRITE_FACTS.perform(
                deps, credential, {"source": "bench", "facts": [{"content": f} for f in FACTS]})
            ids = written.ids
            results: dict[str, dict[str, float]] = {}
            for name, questions in (("paraphrase", PARAPHRASES), ("exact-token", EXACT)):
                wanted = [ids[i] for _, i in questions]
                for mode in ("keyword", "hybrid"):
                    ranked = []
                    for question, _ in questions:
                        found = await brain.SEARCH_FACTS.perform(
                            deps, credential, {"query": question, "mode": mode, "limit": k})
                        ranked.append([row.id for row in found.results])
                    at_1, at_k = hit_rates(ranked, wanted, k)
                    results[f"{name}/{mode}"] = {"hit@1": at_1, f"recall@{k}": at_k, "queries": len(questions)}
            return results
        finally:
            await close_local_deps(deps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hash"])
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    results = asyncio.run(run(args.embedder, args.k))
    print(f"embedder={args.embedder} facts={len(FACTS)}")
    print(f"{'set/mode':<24}{'hit@1':>8}{f'recall@{args.k}':>11}{'queries':>9}")
    for name, row in results.items():
        print(f"{name:<24}{row['hit@1']:>8.2f}{row[f'recall@{args.k}']:>11.2f}{int(row['queries']):>9}")
    from bench_common import print_figures

    print_figures({"bench": "brain_paraphrase", "embedder": args.embedder, "facts": len(FACTS), **results})


if __name__ == "__main__":
    main()

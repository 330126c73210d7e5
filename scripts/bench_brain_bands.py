"""Where the write-time band thresholds sit for the local embedder: cosine similarity of labelled
fact pairs (duplicates, updates of one fact, related facts, unrelated facts), printed per label
beside the product's thresholds (``Tuning``), with how each label would be treated.

    .venv/bin/python scripts/bench_brain_bands.py [--pairs tests/data/brain/band_pairs.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from memvault.adapters.local.embedder import make_embedder
from memvault.core.ranking import exact_tokens
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.core.vectors import cosine

ROOT = Path(__file__).resolve().parents[1]


def band(similarity: float, same_tokens: bool, block: float, flag: float, candidate: float) -> str:
    if similarity >= block and same_tokens:
        return "block"
    if similarity >= flag:
        return "flag"
    return "candidate" if similarity >= candidate else "none"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=ROOT / "tests/data/brain/band_pairs.json")
    args = parser.parse_args()
    settings = load_settings()
    embedder = make_embedder(settings.embedder)
    pairs = json.loads(args.pairs.read_text())
    tuning = Tuning()
    block, flag, candidate = (tuning.brain_block_similarity, tuning.brain_flag_similarity,
                              tuning.brain_candidate_similarity)
    print(f"embedder {embedder.model_id}; thresholds block {block} flag {flag} candidate {candidate}")
    figures: dict[str, object] = {"bench": "brain_bands", "embedder": embedder.model_id}
    for label, items in pairs.items():
        vectors = await embedder.embed([text for pair in items for text in pair])
        sims = [cosine(vectors[2 * i], vectors[2 * i + 1]) for i in range(len(items))]
        bands = [band(s, exact_tokens(a) == exact_tokens(b), block, flag, candidate) for s, (a, b) in zip(sims, items, strict=True)]
        counts = {name: bands.count(name) for name in ("block", "flag", "candidate", "none")}
        print(f"{label:10} n={len(sims):2} min {min(sims):.3f} median {statistics.median(sims):.3f} "
              f"max {max(sims):.3f}  bands {counts}")
        figures[label] = {"min": min(sims), "median": statistics.median(sims), "max": max(sims), "bands": counts}
    from bench_common import print_figures

    print_figures(figures)


if __name__ == "__main__":
    asyncio.run(main())

"""A slice of scripts/bench_answers.py on the real embedder: questions whose answer lives only in
the brain and questions whose answer was only said in conversation, each through the router's
recall for one key granted brain scopes, at a small and a roomy budget. Floors below the
benchmark's targets: a slice is small, but a change that stops either kind reaching the block
fails here."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

from bench_answers import measure  # noqa: E402


async def test_both_kinds_of_answer_reach_the_injected_block() -> None:
    found = await measure("minilm", (150, 1000), every=3)
    rates = found["rates"]
    assert found["cases"] == {"brain": 15, "memory": 15}
    for budget in (150, 1000):
        assert rates["brain"][budget] >= 0.8, rates
        assert rates["memory"][budget] >= 0.8, rates
        assert rates["memory"][budget] >= rates["memory_without_grant"][budget] - 0.1, rates

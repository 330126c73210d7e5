"""Recency windows, budget filling and rank fusion."""

from __future__ import annotations

from memvault.core.memory.windows import Ranked, WindowPolicy, fill_budget
from memvault.core.ranking import fts_match_expression, query_terms, reciprocal_rank_fusion

POLICY = WindowPolicy(4 * 3600, 3 * 86400, 90 * 86400, (0.2, 0.3, 0.3))


def test_window_boundaries() -> None:
    now = 1e9
    assert [POLICY.window_of(now - age, now) for age in (0, 4 * 3600, 4 * 3600 + 1, 3 * 86400 + 1, 91 * 86400)] == [
        "hot", "hot", "working", "long_term", "archive"
    ]


def test_budget_is_never_exceeded_and_best_come_first() -> None:
    items = [Ranked(f"k{i}", 70, 1.0 / (i + 1), ("hot", "working", "long_term", "archive")[i % 4]) for i in range(40)]
    chosen = fill_budget(items, POLICY, 1000, 100)
    assert sum(r.tokens for r in chosen) <= 1000
    assert [r.score for r in chosen] == sorted((r.score for r in chosen), reverse=True)
    assert chosen[0].key == "k0"


def test_each_window_gets_its_share_when_relevant_enough() -> None:
    items = [Ranked(f"old{i}", 100, 1.0 - i * 0.01, "archive") for i in range(20)]
    items.append(Ranked("hot", 100, 0.6, "hot"))
    chosen = {r.key for r in fill_budget(items, POLICY, 500, 100)}
    assert "hot" in chosen
    items[-1] = Ranked("hot", 100, 0.1, "hot")
    assert "hot" not in {r.key for r in fill_budget(items, POLICY, 500, 100)}


def test_rrf_rewards_agreement() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "a", "d"]]))
    assert fused["a"] == fused["b"] > fused["c"] == fused["d"]


def test_keyword_expression_quotes_terms_and_drops_stopwords() -> None:
    assert query_terms("What is the invoice #20028 for NVDA?") == ["invoice", "#20028", "nvda"]
    assert fts_match_expression('what "is" AND the OR') is None or "AND" not in (fts_match_expression('what "is" AND the OR') or "")
    assert fts_match_expression("invoice #20028 NEAR(x)") == '"invoice" OR "20028" OR "near" OR "x"'

"""Recency windows, budget filling and rank fusion."""

from __future__ import annotations

from memvault.core.memory.windows import WindowPolicy, fill_in_order
from memvault.core.models import SearchItem
from memvault.core.ranking import (
    exact_tokens,
    fts_terms,
    normalize_text,
    query_terms,
    reciprocal_rank_fusion,
)

POLICY = WindowPolicy(3 * 86400, 90 * 86400, 0.25)


def item(key: str, tokens: int, score: float) -> SearchItem:
    return SearchItem(" ".join(["w"] * ((tokens * 3) // 4)), score, "", 0.0, 0.0, [key], "user", tokens, "vault")


def test_window_boundaries() -> None:
    now = 1e9
    assert [POLICY.window_of(now - age, now) for age in (0, 4 * 3600, 4 * 3600 + 1, 3 * 86400 + 1, 91 * 86400)] == [
        "hot", "hot", "working", "long_term", "archive"
    ]


def test_budget_is_never_exceeded_and_best_come_first() -> None:
    items = [item(f"k{i}", 72, 1.0 / (i + 1)) for i in range(40)]
    chosen = fill_in_order(items, 1000, None)
    assert sum(r.tokens for r in chosen) <= 1000
    assert [r.source_ids for r in chosen] == [r.source_ids for r in items[: len(chosen)]]
    assert len(chosen) == 14 and chosen[-1].text.endswith("…")  # 13 whole, the 14th cut to the 64 left
    assert len(fill_in_order(items, 72 * 13 + 10, None)) == 13  # too little left to be worth a cut


def test_an_explicit_limit_caps_the_count_and_no_limit_fills_the_budget() -> None:
    items = [item(f"k{i}", 10, 1.0) for i in range(200)]
    assert len(fill_in_order(items, 1000, None)) == 100
    assert len(fill_in_order(items, 1000, 20)) == 20


def test_recency_lifts_a_score_by_at_most_its_weight_and_halves_each_working_window() -> None:
    now = 1e9
    assert POLICY.recency_factors([now], now)[0] == 1.25
    assert abs(POLICY.recency_factors([now - 3 * 86400], now)[0] - 1.125) < 1e-9
    assert 1.0 <= POLICY.recency_factors([now - 365 * 86400], now)[0] < 1.0001
    assert POLICY.recency_factors([now + 60], now)[0] == 1.25  # a clock a little behind is not a penalty


def test_the_same_text_and_the_tokens_that_must_match() -> None:
    assert normalize_text("What is my  CAT called?") == normalize_text("what is my cat called") == "what is my cat called"
    assert exact_tokens("Invoice 1237 is due on Tuesday.") == {"1237", "tuesday"}
    assert exact_tokens("Last year I moved to Lisbon.") == exact_tokens("I moved to Lisbon last year.") == {"lisbon"}


def test_rrf_rewards_agreement() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "a", "d"]]))
    assert fused["a"] == fused["b"] > fused["c"] == fused["d"]


def test_keyword_terms_quote_each_word_and_drop_stopwords() -> None:
    assert query_terms("What is the invoice #20028 for NVDA?") == ["invoice", "#20028", "nvda"]
    assert fts_terms('what "is" AND the OR') == []
    assert fts_terms("invoice #20028 NEAR(x)") == ['"invoice"', '"20028"', '"near"', '"x"']


def test_possessives_search_as_the_name() -> None:
    assert query_terms("Mia's violin and Caroline’s art, it's late") == ["mia", "violin", "caroline", "art", "late"]


def test_a_message_asks_when_it_ends_on_a_question_mark_whatever_closes_after_it() -> None:
    from memvault.core.memory.message_facts import asks

    asking = ["Where?", "where? ", 'She said "really?"', "(is it?)\u00a0\n", "\u201cwhy?\u201d \u2019 ) ", "?"]
    telling = ["", "   ", "It is.", "Is it? No.", '"?" means a question, she said', "a ? b", ")\"'"]
    assert [asks(text) for text in asking] == [True] * len(asking)
    assert [asks(text) for text in telling] == [False] * len(telling)

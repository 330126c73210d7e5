"""The product's tuning: the constants benchmarks measured (chunk shape, weights, thresholds,
half-lives, batch sizes) that tests and benchmark sweeps may vary. They are not settings: no
environment variable reaches them, so every deployment runs what the benchmarks measured. A
composition root hands ``Tuning()`` to ``Deps``; a test or a sweep passes another one, built with
``Tuning().replace(...)``. Constants nothing varies stay beside the code that uses them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

DAY = 86400.0


def tuned(default: Any, help: str) -> Any:
    """One field of ``Tuning``, with what it means (docs/settings.md lists them)."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Tuning:
    chunk_tokens: int = tuned(300, "Target size of a stored chunk, in tokens.")
    chunk_overlap_tokens: int = tuned(30, "Tokens repeated between consecutive chunks.")
    working_window_seconds: float = tuned(
        3 * DAY, "Conversation recency: the `working` window; a memory's recency boost halves with every one of these of age.")
    recency_weight: float = tuned(
        0.25, "How much recency lifts a memory's score: up to 1 + this for one from just now.")
    mirror_head_start_seconds: float = tuned(
        0.15, "Head start a vault gets before the mirror is also asked (the mirror is asked at once if the vault fails).")
    embed_batch: int = tuned(256, "Messages per embedding call when storing (the embedder batches them further by length).")
    keyword_postings: int = tuned(
        8000, "Rows one keyword search ranks by BM25 at most; rarer query terms are kept first within it.")
    code_page_rows: int = tuned(
        2000, "Vector codes read per statement when they are not held in memory (the mirror; a vault past its memory budget).")
    brain_hook_chars: int = tuned(
        600, "Longest fact kept inline in the brain; a longer body goes to the blob store and the row keeps this many characters as its hook.")
    brain_block_similarity: float = tuned(
        0.95, "Write-time bands: a new fact this similar to a current fact of its scope, with the same numbers, codes and names, is not stored.")
    brain_flag_similarity: float = tuned(
        0.80, "Write-time bands: from this similarity the brain's LLM decides contradiction, replace, merge or keep both.")
    brain_candidate_similarity: float = tuned(
        0.60, "Write-time bands: from this similarity the brain's LLM checks for a contradiction only.")
    brain_half_life_seconds: tuple[tuple[str, float], ...] = tuned(
        (("loop", 14 * DAY), ("project", 90 * DAY), ("feedback", 180 * DAY), ("fact", 365 * DAY),
         ("reference", 365 * DAY), ("skill", 365 * DAY), ("user", 730 * DAY)),
        "Brain rerank: how fast each entry type's relevance fades with age (its half-life).")
    brain_rerank: bool = tuned(
        True, "Brain hybrid search reranks by relevance x recency x recall frequency x importance (False: relevance alone).")
    answer_fact_similarity: float = tuned(
        0.55, "Joint recall: a brain fact this similar to the query (cosine) is relevant to it.")
    answer_keyword_similarity: float = tuned(
        0.30, "Joint recall: a brain fact that shares the query's words is relevant to it from this similarity.")
    answer_pinned_share: float = tuned(
        0.25, "Joint recall: the share of a budget pinned core facts may fill before the ranked entries.")
    consolidate_batch: int = tuned(300, "Consolidation: most current facts of one scope compared per run (the newest first).")
    reembed_batch: int = tuned(200, "Nightly run and restore: most unembedded rows embedded per vault (or per page) at a time.")
    backup_page_rows: int = tuned(500, "Nightly backup: rows read per database statement and written per part object.")

    def __post_init__(self) -> None:
        counts = ("chunk_tokens", "embed_batch", "keyword_postings", "code_page_rows", "brain_hook_chars",
                  "consolidate_batch", "reembed_batch", "backup_page_rows")
        for name in counts:
            if getattr(self, name) < 1:
                raise ValueError(f"Tuning.{name} must be a positive whole number")
        if not 0 <= self.chunk_overlap_tokens < self.chunk_tokens:
            raise ValueError("Tuning.chunk_overlap_tokens must be at least 0 and less than chunk_tokens")
        if self.working_window_seconds <= 0 or self.recency_weight < 0 or self.mirror_head_start_seconds < 0:
            raise ValueError("Tuning: windows must be positive, weights and head starts not negative")
        if not 0.0 <= self.brain_candidate_similarity <= self.brain_flag_similarity <= self.brain_block_similarity <= 1.0:
            raise ValueError("Tuning: 0 <= candidate <= flag <= block similarity <= 1")
        if not 0.0 <= self.answer_keyword_similarity <= self.answer_fact_similarity <= 1.0:
            raise ValueError("Tuning: 0 <= answer keyword similarity <= answer fact similarity <= 1")
        if not 0.0 <= self.answer_pinned_share <= 1.0:
            raise ValueError("Tuning.answer_pinned_share must be between 0 and 1")
        if any(seconds <= 0 for _, seconds in self.brain_half_life_seconds):
            raise ValueError("Tuning.brain_half_life_seconds must all be positive")

    def replace(self, **changes: Any) -> Tuning:
        return dataclasses.replace(self, **changes)


"""From the candidates of a key's vaults to one ranked list of items: each vault's candidates (its
pending messages among them, see ``buffer_channel.py``) fused into scored messages, then recency,
the periods the query names, whether a message asks or tells and whether its speaker is a person
the query names folded into every score, ranked once. What a search returns is a prefix of this
ranking (``windows.fill_in_order``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter

from memvault.core.memory.buffer_channel import OPEN_CHUNK
from memvault.core.memory.fusion import fuse
from memvault.core.memory.message_facts import facts_of, normalised
from memvault.core.memory.question_forms import asks_for_several
from memvault.core.memory.speakers import named_among
from memvault.core.memory.when import closeness, query_periods
from memvault.core.memory.windows import WindowPolicy
from memvault.core.models import Candidate, MemoryRow, SearchItem
from memvault.core.redaction import holds_breadcrumb, redact

# A memory from a period the query names ("on 3 June", "last week") counts up to this much more.
# LoCoMo dev through the router, the questions' dates moved with the conversations: recall@1000
# 0.872 -> 0.880, @2000 0.916 -> 0.921 (0.5: 0.877 / 0.921; 2: 0.880 / 0.921).
NAMED_PERIOD_WEIGHT = 1.0
# A message that ends asking something is memory of a question, not of what answers it; it counts
# this much (its answer still borrows from it in full). LoCoMo dev through the router: @1000
# 0.878 -> 0.880, @2000 0.918 -> 0.921, both halves of the split alike; 0.7-0.9 within 0.001.
ASKING_WEIGHT = 0.8
# A message said by a person the query names counts this much more than others' lines about them.
# LoCoMo dev through the router (conversations stored as "Speaker: text"): multi-hop recall@1000
# 0.607 -> 0.628, @2000 0.732 -> 0.758; overall 0.881 -> 0.885 / 0.920 -> 0.926; adversarial
# questions, which name the wrong person on purpose, 0.979 -> 0.977 @2000. Weights of 0.3-0.5 lift
# multi-hop to 0.636-0.648 @1000 and cost adversarial and temporal questions 0.01-0.02.
SPEAKER_WEIGHT = 0.2
# The same, for a question asking for several things ("what activities does Alice do?",
# ``question_forms.py``): one person's many lines are its answer. LoCoMo dev through the router:
# multi-hop recall@1000 0.628 -> 0.636, @2000 0.758 -> 0.766, every other category unchanged
# (0.5: multi-hop 0.632 / 0.761; 1.5: 0.636 / 0.770, adversarial @1000 0.960 -> 0.956; also
# counting "how many" and "what are" questions: multi-hop 0.646 / 0.767, adversarial @1000 0.956
# and single-hop 0.947).
LISTING_SPEAKER_WEIGHT = 1.0
# Scores are ranked, and returned, rounded to this many decimals.
SCORE_DIGITS = 6
# A scored row: its exact score negated, then what ranks rows of one rounded score (newer first,
# their sources, the answers' order, fusion's order: its best first, then row ids), then the row,
# its origin and its vault.
Scored = tuple[float, float, tuple[str, ...], int, float, str, MemoryRow, str, str]
_after_score = itemgetter(1, 2, 3, 4, 5)


@dataclass
class VaultAnswer:
    """What one vault (or its mirror) answered: the candidates of its rows and pending messages."""

    name: str
    source: str  # "vault" | "mirror"
    candidates: list[Candidate]


def rank_items(answers: Sequence[VaultAnswer], query: str, policy: WindowPolicy, now: float) -> Iterator[SearchItem]:
    """Every item found, best first: relevance times recency, times closeness to the periods the
    query names, less for a message that asks, more for one said by a person the query names;
    newer first among equals. Every candidate is scored, but items are made as they are taken:
    a budget takes a few dozen of the hundreds a search finds."""
    periods = query_periods(query, now)
    fused = [fuse(answer.candidates) for answer in answers]
    facts = [{row_id: facts_of(row.text) for row_id, row in found.messages.items()} for found in fused]
    labels: dict[str, str | None] = {}
    for found, found_facts in zip(fused, facts, strict=True):
        for row_id, row in found.messages.items():
            if row.kind == "message" and row_id not in labels:
                labels[row_id] = found_facts[row_id].speaker
    named = named_among(query, labels.values())
    said_more = 1.0 + (LISTING_SPEAKER_WEIGHT if asks_for_several(query) else SPEAKER_WEIGHT)

    # Ties in score and time keep the answers' order, then fusion's (its best first, then its ids).
    scored: list[Scored] = []
    for place, (answer, found, found_facts) in enumerate(zip(answers, fused, facts, strict=True)):
        vault = "core" if answer.name.endswith(":core") else "session"
        recency = policy.recency_factors([row.ts_end for row, _ in found.scored], now)
        for (row, fused_score), recent in zip(found.scored, recency, strict=True):
            relevance = fused_score
            if found_facts[row.id].asks:
                relevance *= ASKING_WEIGHT
            if named and labels.get(row.id) in named:
                relevance *= said_more
            if periods:
                relevance *= 1.0 + NAMED_PERIOD_WEIGHT * closeness(periods, row.ts_end)
            origin = "buffer" if row.parent_id == OPEN_CHUNK else answer.source
            scored.append((-(relevance * recent), -row.ts_end, row.source_ids, place, -fused_score, row.id, row, origin,
                           vault))
    scored.sort()
    for score, (_, _, _, _, _, _, row, origin, vault) in _by_rounded_score(scored):
        yield SearchItem(text=row.text, score=score, window=policy.window_of(row.ts_end, now), ts_start=row.ts_start,
                         ts_end=row.ts_end, source_ids=list(row.source_ids), role=row.role, tokens=row.token_count,
                         origin=origin, vault=vault)


def _by_rounded_score(scored: list[Scored]) -> Iterator[tuple[float, Scored]]:
    """``scored``, sorted by its exact scores, in rank order: by score rounded to ``SCORE_DIGITS``,
    then by the rest of each entry. Rounding keeps the scores' order, so the entries of one rounded
    score are a run of ``scored``, re-sorted within itself; only the runs taken are rounded (a
    rounding costs as much as the rest of an entry's scoring)."""
    start, count = 0, len(scored)
    score = round(-scored[0][0], SCORE_DIGITS) if scored else 0.0
    while start < count:
        end, following = start + 1, score
        while end < count:
            following = round(-scored[end][0], SCORE_DIGITS)
            if following != score:
                break
            end += 1
        run = scored[start:end]
        if len(run) > 1:
            run.sort(key=_after_score)
        for entry in run:
            yield score, entry
        start, score = end, following


def without_repeats(items: Iterable[SearchItem], texts: Sequence[str]) -> Iterator[SearchItem]:
    """``items`` less those whose whole text (normalised) is the same as, or part of, one of
    ``texts``, as sent or as stored through the secret gate (an item with a secret taken out is
    compared with the gated texts, gated once); lazily, so only the items a budget takes are
    compared."""
    said = [text for text in texts if text.strip()]
    known = [normalised(text) for text in said]
    gated: list[str] = []

    def repeats(item: SearchItem) -> bool:
        text = normalised(item.text)
        if any(text in other for other in known):
            return True
        if not holds_breadcrumb(item.text):
            return False
        if not gated:
            gated.extend(normalised(redact(other).text) for other in said)
        return any(text in other for other in gated)

    return (item for item in items if not known or not repeats(item))

"""What a skill proposal may duplicate, found before it is stored: current skills of the same slug
family, and skills and facts whose text a hybrid search over the proposal's words finds (keyword
hits, and vector hits close enough to count; fused by rank), all within what the proposer may read.
A fact that mirrors a skill is reported as that skill."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from memvault.core.brain.commands import MAX_QUERY_CHARS
from memvault.core.brain.facts import hook_of
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.brain.search import keyword_search, vector_search
from memvault.core.brain.skill_proposal_input import CheckedProposal
from memvault.core.brain.skill_proposal_results import SkillCandidate
from memvault.core.brain.skills import COLUMNS
from memvault.core.deps import Deps
from memvault.core.ranking import reciprocal_rank_fusion

log = logging.getLogger("memvault.brain")

# The search's best hits looked at, and the text matches kept of them.
SEARCHED, KEPT = 20, 5
# A fact candidate shows this much of its text.
SHOWN_CHARS = 300
# A vector neighbour is a candidate only this close (cosine): the nearest rows of an unrelated
# proposal are still "nearest", and a list of them would bury the real duplicates.
SIMILAR_COSINE = 0.6
_VERSION_TAIL = re.compile(r"[-._]v?\d+$")
_MIRROR = re.compile(r"^skill:(?P<scope>[^/]+)/(?P<slug>.+)$")


def stem(slug: str) -> str:
    """A slug without a trailing version number (`-v2`, `.3`)."""
    return _VERSION_TAIL.sub("", slug) or slug


def same_family(a: str, b: str) -> bool:
    """Two slugs of one family: the same stem, or one stem continuing the other (`pay-invoice`,
    `pay-invoice-eu`)."""
    x, y = stem(a), stem(b)
    return x == y or any(x.startswith(y + sep) or y.startswith(x + sep) for sep in "-._")


async def find_candidates(deps: Deps, credential: Credential, proposal: CheckedProposal) -> list[SkillCandidate]:
    wall, params = scope_filter(credential)
    head = re.split(r"[-._]", stem(proposal.slug))[0]
    rows = await deps.db.query(
        f"SELECT {COLUMNS} FROM skills WHERE {wall} AND superseded_at IS NULL AND substr(slug, 1, ?) = ?",
        [*params, len(head), head])
    by_slug = {(row["scope"], row["slug"]): row for row in rows if same_family(row["slug"], proposal.slug)}
    scores: dict[tuple[str, str], float] = {}
    texts: list[SkillCandidate] = []
    for row, score in await _similar(deps, credential, proposal):
        mirror = _MIRROR.match(row["source"]) if row["entry_type"] == "skill" else None
        if mirror is not None:
            key = (mirror["scope"], mirror["slug"])
            scores[key] = max(scores.get(key, 0.0), score)
            continue
        texts.append(SkillCandidate("fact", row["id"], row["scope"], "text", round(score, 6),
                                    content=hook_of(row["content"], SHOWN_CHARS)))
    found_skills = await _current_skills(deps, credential, [key for key in scores if key not in by_slug])
    skills = [_skill(row, "slug", scores.get((row["scope"], row["slug"]), 0.0)) for row in by_slug.values()]
    texts += [_skill(row, "text", scores[(row["scope"], row["slug"])]) for row in found_skills]
    skills.sort(key=lambda c: (c.slug != proposal.slug, c.scope != proposal.scope, -c.score, c.id))
    texts.sort(key=lambda c: (-c.score, c.id))
    return skills + texts[:KEPT]


async def _similar(deps: Deps, credential: Credential, proposal: CheckedProposal) -> list[tuple[dict[str, Any], float]]:
    """Current facts like the proposal's words, best first: the keyword channel, and the vector
    channel's close neighbours (left out, as search leaves it, when it fails)."""
    query = " ".join([proposal.title, *proposal.triggers, *proposal.steps])[:MAX_QUERY_CHARS]
    keyword = await keyword_search(deps, credential, query, SEARCHED)
    try:
        vector = await asyncio.wait_for(vector_search(deps, credential, query, SEARCHED),
                                        deps.settings.race_timeout_ms / 1000.0)
    except Exception as exc:  # the keyword channel answers alone; a proposal is never refused for this
        log.warning("brain vector channel failed while looking for skill candidates: %s", type(exc).__name__)
        vector = []
    close = [(row, score) for row, score in vector if score >= SIMILAR_COSINE]
    rows = {row["id"]: row for row, _ in [*keyword, *close]}
    fused = reciprocal_rank_fusion([[row["id"] for row, _ in keyword], [row["id"] for row, _ in close]])
    return [(rows[row_id], score) for row_id, score in fused][:SEARCHED]


def _skill(row: dict[str, Any], match: str, score: float) -> SkillCandidate:
    return SkillCandidate("skill", row["id"], row["scope"], match, round(score, 6),  # type: ignore[arg-type]
                          slug=row["slug"], version=row["version"], title=row["name"])


async def _current_skills(deps: Deps, credential: Credential, keys: list[tuple[str, str]]) -> list[dict[str, Any]]:
    if not keys:
        return []
    wall, params = scope_filter(credential)
    pairs = " OR ".join("(scope = ? AND slug = ?)" for _ in keys)
    return await deps.db.query(
        f"SELECT {COLUMNS} FROM skills WHERE {wall} AND superseded_at IS NULL AND ({pairs})",
        [*params, *(value for key in keys for value in key)])

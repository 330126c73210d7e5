"""What the skill proposal operations answer; ``wire.to_plain`` of each is its public shape."""

from __future__ import annotations

from typing import Literal

from memvault.core.brain.results import Skill
from memvault.core.brain.wire import shape, spec

RegistrationStatus = Literal["registered", "updated", "unchanged"]


@shape
class SkillCandidate:
    """Something already stored that the proposal may duplicate: edit it instead of adding a skill."""

    kind: Literal["skill", "fact"]
    id: str = spec("The skill's id (its version's) or the fact's.")
    scope: str
    match: Literal["slug", "text"] = spec("slug: its slug is the proposal's or shares its stem; text: hybrid search "
                                          "found it.")
    score: float = spec("The search's score (0 for a slug match search did not find); higher is closer.")
    slug: str | None = spec("A skill's slug.", default=None, omit=True)
    version: int | None = spec("A skill's version when the proposal was made.", default=None, omit=True)
    title: str | None = spec("A skill's name.", default=None, omit=True)
    content: str | None = spec("A fact's text (its hook, for a long one).", default=None, omit=True)


@shape
class SkillProposal:
    id: str
    status: Literal["pending", "confirmed", "rejected"]
    scope: str
    slug: str = spec("The slug it is registered under when confirmed without `version_of`.")
    title: str
    triggers: list[str]
    steps: list[str]
    source_trail: list[str]
    candidates: list[SkillCandidate] = spec("What it may duplicate, closest first (only what the reader may read).")
    redacted: list[str] = spec("Kinds of secret redacted from its fields, never the values.")
    created_at: float
    created_by: str
    decided_at: float | None
    decided_by: str | None
    reason: str | None = spec("Why it was rejected.")
    skill_id: str | None = spec("The skill version a confirmation registered (or found unchanged).")


@shape
class SkillProposed:
    proposal: SkillProposal


@shape
class SkillProposalList:
    proposals: list[SkillProposal]


@shape
class SkillProposalConfirmed:
    id: str
    status: Literal["confirmed"]
    registration: RegistrationStatus = spec("registered (a new slug), updated (a new version) or unchanged "
                                            "(that version already said the same).")
    skill: Skill


@shape
class SkillProposalRejected:
    id: str
    status: Literal["rejected"]
    reason: str | None

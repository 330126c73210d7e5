"""The secret gate over the skills the brain hands out, as over its facts (``recall_gate``): a
skill, a listing or a skill proposal stored before a rule existed is redacted on its way out."""

from __future__ import annotations

import dataclasses

from memvault.core.brain.commands import GetSkill, ListSkills
from memvault.core.brain.results import SkillFound, SkillList
from memvault.core.brain.scopes import Credential
from memvault.core.brain.skill_proposal_input import CheckedProposal, ListSkillProposals
from memvault.core.brain.skill_proposal_results import SkillCandidate, SkillProposal, SkillProposalList, SkillProposed
from memvault.core.brain.skill_proposals import list_skill_proposals, propose_skill
from memvault.core.brain.skills import get_skill, list_skills
from memvault.core.deps import Deps
from memvault.core.redaction.recall import recalled


def _text(value: str | None) -> str | None:
    return recalled(value).text if value else value


def _candidate(candidate: SkillCandidate) -> SkillCandidate:
    return dataclasses.replace(candidate, title=_text(candidate.title), content=_text(candidate.content))


def _proposal(proposal: SkillProposal) -> SkillProposal:
    return dataclasses.replace(
        proposal, title=recalled(proposal.title).text, triggers=[recalled(t).text for t in proposal.triggers],
        steps=[recalled(step).text for step in proposal.steps], candidates=[_candidate(c) for c in proposal.candidates])


async def skill_read(deps: Deps, credential: Credential, command: GetSkill) -> SkillFound:
    """``get_skill`` through the gate: a skill's name, description and procedure."""
    skill = (await get_skill(deps, credential, command)).skill
    return SkillFound(dataclasses.replace(skill, name=recalled(skill.name).text,
                                          description=recalled(skill.description).text, content=recalled(skill.content).text))


async def skills_listed(deps: Deps, credential: Credential, command: ListSkills) -> SkillList:
    """``list_skills`` through the gate: each skill's name and description."""
    found = await list_skills(deps, credential, command)
    return SkillList([dataclasses.replace(s, name=recalled(s.name).text, description=recalled(s.description).text)
                      for s in found.skills])


async def skill_proposed(deps: Deps, credential: Credential, proposal: CheckedProposal) -> SkillProposed:
    """``propose_skill`` with what it answers through the gate: the candidates it found are stored
    facts and skills."""
    return SkillProposed(_proposal((await propose_skill(deps, credential, proposal)).proposal))


async def skill_proposals_listed(deps: Deps, credential: Credential, command: ListSkillProposals) -> SkillProposalList:
    """``list_skill_proposals`` through the gate."""
    found = await list_skill_proposals(deps, credential, command)
    return SkillProposalList([_proposal(p) for p in found.proposals])

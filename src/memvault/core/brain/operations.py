"""The brain's operations: each one name (its verb on every surface), one parser from plain data to
its typed command, one function ``(deps, credential, command) -> result``, and the classes its
input and result are declared by. Every surface calls ``perform``; none checks input itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memvault.core.brain import commands, fact_input, results, skill_proposal_input, skill_proposal_results
from memvault.core.brain.facts import write_facts
from memvault.core.brain.proposals import accept_proposal, reject_proposal
from memvault.core.brain.recall_gate import (
    body_read,
    consolidated,
    exported,
    history_read,
    proposals_read,
    recalled_facts,
    searched,
    synced,
)
from memvault.core.brain.retire import retire_fact
from memvault.core.brain.scopes import Credential
from memvault.core.brain.skill_gate import skill_proposals_listed, skill_proposed, skill_read, skills_listed
from memvault.core.brain.skill_proposals import (
    confirm_skill_proposal,
    reject_skill_proposal,
)
from memvault.core.brain.skills import register_skill
from memvault.core.brain.wire import parse_fields
from memvault.core.deps import Deps
from memvault.core.settings import Settings

C = TypeVar("C")
R = TypeVar("R")
Parser = Callable[[object, Credential, Settings, bool], C]


@dataclass(frozen=True)
class Operation(Generic[C, R]):
    name: str
    summary: str
    input: type  # the dataclass whose fields are the input's, on every surface
    output: Any  # the result's class (a union where an operation answers one of two)
    parse: Parser[C]
    run: Callable[[Deps, Credential, C], Awaitable[R]]

    async def perform(self, deps: Deps, credential: Credential, data: object, text: bool = False) -> R:
        """Parse ``data`` (``text``: its values came as text, as a query string carries them) and run."""
        return await self.run(deps, credential, self.parse(data, credential, deps.settings, text))


def _data_only(parse: Callable[[object, bool], C]) -> Parser[C]:
    """A parser that needs nothing of the caller: the input alone decides."""
    return lambda data, _credential, _settings, text: parse(data, text)


def _fields(cls: type[C]) -> Parser[C]:
    """The parser of an input its fields say everything about."""
    return lambda data, _credential, _settings, text: parse_fields(cls, data, text=text)


WRITE_FACTS: Operation[fact_input.WriteFacts, results.FactsWritten] = Operation(
    "write_facts", "Write one fact or a batch (writer credentials, within their scopes); idempotent per source and "
    "text.", fact_input.WriteFactsIn, results.FactsWritten, fact_input.parse_write, write_facts)
SEARCH_FACTS: Operation[commands.SearchFacts, results.FoundFacts] = Operation(
    "search_facts", "Search the facts the credential may read: `keyword` (exact tokens count) or `hybrid`.",
    commands.SearchFacts, results.FoundFacts, _fields(commands.SearchFacts), searched)
RECALL: Operation[commands.Recall, results.Recollection] = Operation(
    "recall", "One envelope within a token budget: pinned core, recent facts, and what matches `query`.",
    commands.Recall, results.Recollection, _fields(commands.Recall), recalled_facts)
FACT_BODY: Operation[commands.FactRef, results.FactBody] = Operation(
    "fact_body", "A fact's full text (hook and body); absent and walled facts are both 404.",
    commands.FactRef, results.FactBody, _data_only(commands.parse_fact_ref), body_read)
FACT_HISTORY: Operation[commands.FactRef, results.FactHistory] = Operation(
    "fact_history", "A fact's supersession chain, oldest first, within the credential's scopes.",
    commands.FactRef, results.FactHistory, _data_only(commands.parse_fact_ref), history_read)
RETIRE_FACT: Operation[commands.CheckedRetirement, results.FactRetired] = Operation(
    "retire_fact", "Retire a fact by hand with a reason (writers, within their scopes): superseded by nothing, never "
    "deleted; 409 if it is no longer current.",
    commands.RetireFact, results.FactRetired, commands.parse_retire_fact, retire_fact)
EXPORT_FACTS: Operation[commands.ExportFacts, results.ExportedFacts] = Operation(
    "export_facts", "Every fact the credential may read, superseded ones included, as JSON lines.",
    commands.ExportFacts, results.ExportedFacts, _fields(commands.ExportFacts), exported)
REGISTER_SKILL: Operation[commands.CheckedSkill, results.SkillRegistered] = Operation(
    "register_skill", "Register a skill (a named procedure) or a new version of one; writer credentials only.",
    commands.RegisterSkill, results.SkillRegistered, commands.parse_register_skill, register_skill)
GET_SKILL: Operation[commands.GetSkill, results.SkillFound] = Operation(
    "get_skill", "A skill the credential may read: its current version, or `version`.",
    commands.GetSkill, results.SkillFound, _data_only(commands.parse_get_skill), skill_read)
LIST_SKILLS: Operation[commands.ListSkills, results.SkillList] = Operation(
    "list_skills", "The current skills the credential may read, without their content.",
    commands.ListSkills, results.SkillList, _fields(commands.ListSkills), skills_listed)
PROPOSE_SKILL: Operation[skill_proposal_input.CheckedProposal, skill_proposal_results.SkillProposed] = Operation(
    "propose_skill", "Propose a skill learned from finished work (writer credentials, within their scopes): it is "
    "stored as pending with the skills and facts it may duplicate, and registered only once a writer confirms it.",
    skill_proposal_input.ProposeSkill, skill_proposal_results.SkillProposed, skill_proposal_input.parse_propose_skill,
    skill_proposed)
LIST_SKILL_PROPOSALS: Operation[skill_proposal_input.ListSkillProposals, skill_proposal_results.SkillProposalList] = (
    Operation("list_skill_proposals", "Skill proposals over the credential's scopes, newest first, each with its "
              "candidates; pending ones unless `status` says otherwise.",
              skill_proposal_input.ListSkillProposals, skill_proposal_results.SkillProposalList,
              _fields(skill_proposal_input.ListSkillProposals), skill_proposals_listed))
CONFIRM_SKILL_PROPOSAL: Operation[skill_proposal_input.ConfirmSkillProposal,
                                  skill_proposal_results.SkillProposalConfirmed] = Operation(
    "confirm_skill_proposal", "Register a pending skill proposal (writers of its scope): under its own slug, or as the "
    "next version of the candidate skill `version_of` names; 409 if decided already or the skill changed since.",
    skill_proposal_input.ConfirmSkillProposal, skill_proposal_results.SkillProposalConfirmed,
    _data_only(skill_proposal_input.parse_confirm_skill_proposal), confirm_skill_proposal)
REJECT_SKILL_PROPOSAL: Operation[skill_proposal_input.RejectSkillProposal,
                                 skill_proposal_results.SkillProposalRejected] = Operation(
    "reject_skill_proposal", "Mark a pending skill proposal rejected, with an optional reason; nothing is registered.",
    skill_proposal_input.RejectSkillProposal, skill_proposal_results.SkillProposalRejected,
    _data_only(skill_proposal_input.parse_reject_skill_proposal), reject_skill_proposal)
SYNC: Operation[commands.Sync, results.SyncPushed | results.SyncPulled] = Operation(
    "sync", "Keep a folder of notes in step: `push` reconciles its facts, `pull` returns what changed since.",
    commands.Sync, results.SyncPushed | results.SyncPulled, _data_only(commands.parse_sync), synced)
CONSOLIDATE: Operation[commands.Consolidate, results.Consolidation] = Operation(
    "consolidate", "Find duplicates, updates, merges and broken chains, as proposals (a dry run unless `dry_run` is "
    "false); writer credentials only.",
    commands.Consolidate, results.Consolidation, _data_only(commands.parse_consolidate), consolidated)
LIST_PROPOSALS: Operation[commands.ListProposals, results.ProposalList] = Operation(
    "list_proposals", "Consolidation proposals over the credential's scopes, newest first.",
    commands.ListProposals, results.ProposalList, _fields(commands.ListProposals), proposals_read)
ACCEPT_PROPOSAL: Operation[commands.ProposalRef, results.ProposalAccepted] = Operation(
    "accept_proposal", "Apply a proposal (writers of its scope): supersede, never delete; 409 if a fact changed since.",
    commands.ProposalRef, results.ProposalAccepted, _data_only(commands.parse_proposal_ref), accept_proposal)
REJECT_PROPOSAL: Operation[commands.ProposalRef, results.ProposalRejected] = Operation(
    "reject_proposal", "Mark a proposal rejected; nothing else changes.",
    commands.ProposalRef, results.ProposalRejected, _data_only(commands.parse_proposal_ref), reject_proposal)

OPERATIONS: dict[str, Operation[Any, Any]] = {op.name: op for op in (
    WRITE_FACTS, SEARCH_FACTS, RECALL, FACT_BODY, FACT_HISTORY, RETIRE_FACT, EXPORT_FACTS, REGISTER_SKILL, GET_SKILL,
    LIST_SKILLS, PROPOSE_SKILL, LIST_SKILL_PROPOSALS, CONFIRM_SKILL_PROPOSAL, REJECT_SKILL_PROPOSAL, SYNC, CONSOLIDATE,
    LIST_PROPOSALS, ACCEPT_PROPOSAL, REJECT_PROPOSAL)}

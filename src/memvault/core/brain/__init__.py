"""The brain's surface-neutral API. Each operation (``operations.OPERATIONS``) takes the deps, a
``Credential`` from ``scopes.auth_of`` and its typed command, and returns its typed result, whose
``wire.to_plain`` form is the public shape; ``Operation.perform`` parses plain data first. The
HTTP routes, the Worker's RPC methods, MCP and the cron all call the very same code."""

from __future__ import annotations

from memvault.core.brain.consolidate import consolidate
from memvault.core.brain.fact_vectors import embed_pending
from memvault.core.brain.facts import ingest_facts, write_facts
from memvault.core.brain.operations import (
    ACCEPT_PROPOSAL,
    CONFIRM_SKILL_PROPOSAL,
    CONSOLIDATE,
    EXPORT_FACTS,
    FACT_BODY,
    FACT_HISTORY,
    GET_SKILL,
    LIST_PROPOSALS,
    LIST_SKILL_PROPOSALS,
    LIST_SKILLS,
    OPERATIONS,
    PROPOSE_SKILL,
    RECALL,
    REGISTER_SKILL,
    REJECT_PROPOSAL,
    REJECT_SKILL_PROPOSAL,
    RETIRE_FACT,
    SEARCH_FACTS,
    SYNC,
    WRITE_FACTS,
    Operation,
)
from memvault.core.brain.proposals import accept_proposal, list_proposals, reject_proposal
from memvault.core.brain.read import export_facts, fact_body, fact_history, sync
from memvault.core.brain.recall import recall
from memvault.core.brain.retire import retire_fact
from memvault.core.brain.scopes import Credential, auth_of, create_brain_token, maintenance_credential
from memvault.core.brain.search import search_facts
from memvault.core.brain.skills import get_skill, list_skills, register_skill
from memvault.core.brain.wire import to_plain

__all__ = [
    "ACCEPT_PROPOSAL",
    "CONFIRM_SKILL_PROPOSAL",
    "CONSOLIDATE",
    "EXPORT_FACTS",
    "FACT_BODY",
    "FACT_HISTORY",
    "GET_SKILL",
    "LIST_PROPOSALS",
    "LIST_SKILLS",
    "LIST_SKILL_PROPOSALS",
    "OPERATIONS",
    "PROPOSE_SKILL",
    "RECALL",
    "REGISTER_SKILL",
    "REJECT_PROPOSAL",
    "REJECT_SKILL_PROPOSAL",
    "RETIRE_FACT",
    "SEARCH_FACTS",
    "SYNC",
    "WRITE_FACTS",
    "Credential",
    "Operation",
    "accept_proposal",
    "auth_of",
    "consolidate",
    "create_brain_token",
    "embed_pending",
    "export_facts",
    "fact_body",
    "fact_history",
    "get_skill",
    "ingest_facts",
    "list_proposals",
    "list_skills",
    "maintenance_credential",
    "recall",
    "register_skill",
    "reject_proposal",
    "retire_fact",
    "search_facts",
    "sync",
    "to_plain",
    "write_facts",
]

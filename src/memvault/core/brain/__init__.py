"""The brain's surface-neutral API: every function takes the deps and a ``Credential`` from
``scopes.auth_of`` first, plain JSON-able input, and returns plain JSON-able output, so the HTTP
routes, the Worker's RPC methods and the cron call the very same code."""

from __future__ import annotations

from memvault.core.brain.consolidate import consolidate
from memvault.core.brain.fact_vectors import embed_pending
from memvault.core.brain.facts import ingest_facts
from memvault.core.brain.proposals import accept_proposal, list_proposals, reject_proposal
from memvault.core.brain.read import export_rows, get_body, history, sync
from memvault.core.brain.recall import recall
from memvault.core.brain.scopes import Credential, auth_of, create_brain_token, maintenance_credential
from memvault.core.brain.search import search_brain
from memvault.core.brain.skills import get_skill, list_skills, register_skill

__all__ = [
    "Credential",
    "accept_proposal",
    "auth_of",
    "consolidate",
    "create_brain_token",
    "embed_pending",
    "export_rows",
    "get_body",
    "get_skill",
    "history",
    "ingest_facts",
    "list_proposals",
    "list_skills",
    "maintenance_credential",
    "recall",
    "register_skill",
    "reject_proposal",
    "search_brain",
    "sync",
]

"""The secret gate over everything the brain hands out: a fact, body or skill stored before a rule
existed is redacted on its way out (a fact's ``redacted`` kinds say so), as conversation memory
is. Search, recall, a body, a history, an export, a sync pull and consolidation's proposals all
pass it; skills pass it in ``skill_gate``."""

from __future__ import annotations

import dataclasses
from typing import TypeVar

from memvault.core.brain.commands import (
    Consolidate,
    ExportFacts,
    FactRef,
    ListProposals,
    Recall,
    SearchFacts,
    Sync,
)
from memvault.core.brain.consolidate import consolidate
from memvault.core.brain.proposals import list_proposals
from memvault.core.brain.read import export_facts, fact_body, fact_history, sync
from memvault.core.brain.recall import recall
from memvault.core.brain.results import (
    Consolidation,
    ExportedFact,
    ExportedFacts,
    Fact,
    FactBody,
    FactHistory,
    FoundFact,
    FoundFacts,
    NamedFact,
    ProposalList,
    ProposedChange,
    RecallEntry,
    Recollection,
    StoredProposal,
    SyncPulled,
    SyncPushed,
)
from memvault.core.brain.scopes import Credential
from memvault.core.brain.search import search_facts
from memvault.core.deps import Deps
from memvault.core.redaction.recall import recalled

F = TypeVar("F", bound=Fact)
P = TypeVar("P", bound=ProposedChange)


def gated_texts(content: str, snippet: str | None) -> tuple[str, str | None, set[str]] | None:
    """The content and snippet through the gate, and the kinds it found; None when it found none."""
    gates = recalled(content), recalled(snippet) if snippet else None
    kinds = {kind for gate in gates if gate is not None for kind in gate.kinds}
    if not kinds:
        return None
    return gates[0].text, gates[1].text if gates[1] is not None else snippet, kinds


def _gated_fact(fact: F) -> F:
    """A fact of any shape with its content, and its passage or whole body where it carries one,
    through the gate."""
    snippet = fact.snippet if isinstance(fact, FoundFact) else None
    changed = gated_texts(fact.content, snippet)
    body = recalled(fact.body) if isinstance(fact, ExportedFact) and fact.body else None
    if changed is None and (body is None or not body.redacted):
        return fact
    content, snippet, kinds = changed if changed is not None else (fact.content, snippet, set())
    replaced: dict[str, object] = {"content": content, "redacted": sorted({*fact.redacted, *kinds, *(body.kinds if body else ())})}
    if isinstance(fact, FoundFact):
        replaced["snippet"] = snippet
    if body is not None:
        replaced["body"] = body.text
    return dataclasses.replace(fact, **replaced)  # type: ignore[arg-type]


def _gated(entry: RecallEntry) -> RecallEntry:
    changed = gated_texts(entry.content, entry.snippet)
    return entry if changed is None else dataclasses.replace(entry, content=changed[0], snippet=changed[1])


def gated_found(found: FoundFacts) -> FoundFacts:
    return dataclasses.replace(found, results=[_gated_fact(fact) for fact in found.results])


def gated_recollection(envelope: Recollection) -> Recollection:
    core = dataclasses.replace(envelope.core, entries=[_gated(entry) for entry in envelope.core.entries])
    return dataclasses.replace(envelope, core=core, recent=[_gated(e) for e in envelope.recent],
                               facts=[_gated(e) for e in envelope.facts])


async def searched(deps: Deps, credential: Credential, command: SearchFacts) -> FoundFacts:
    """``search_facts`` through the gate."""
    return gated_found(await search_facts(deps, credential, command))


async def recalled_facts(deps: Deps, credential: Credential, command: Recall) -> Recollection:
    """``recall`` through the gate."""
    return gated_recollection(await recall(deps, credential, command))


async def body_read(deps: Deps, credential: Credential, ref: FactRef) -> FactBody:
    """``fact_body`` through the gate."""
    found = await fact_body(deps, credential, ref)
    return dataclasses.replace(found, body=recalled(found.body).text)


async def history_read(deps: Deps, credential: Credential, ref: FactRef) -> FactHistory:
    """``fact_history`` through the gate."""
    found = await fact_history(deps, credential, ref)
    return dataclasses.replace(found, chain=[_gated_fact(version) for version in found.chain])


async def exported(deps: Deps, credential: Credential, command: ExportFacts) -> ExportedFacts:
    """``export_facts`` through the gate."""
    found = await export_facts(deps, credential, command)
    return dataclasses.replace(found, facts=[_gated_fact(fact) for fact in found.facts])


async def synced(deps: Deps, credential: Credential, command: Sync) -> SyncPushed | SyncPulled:
    """``sync`` with what a pull hands out through the gate (a push returns only ids and counts)."""
    done = await sync(deps, credential, command)
    if isinstance(done, SyncPulled):
        return dataclasses.replace(done, items=[_gated_fact(fact) for fact in done.items])
    return done


def _gated_proposal(proposal: P) -> P:
    text = recalled(proposal.text).text if proposal.text else proposal.text
    if isinstance(proposal, StoredProposal) and proposal.facts:
        facts = [NamedFact(f.id, recalled(f.content).text if f.content else f.content) for f in proposal.facts]
        return dataclasses.replace(proposal, text=text, facts=facts)
    return dataclasses.replace(proposal, text=text)


async def proposals_read(deps: Deps, credential: Credential, command: ListProposals) -> ProposalList:
    """``list_proposals`` through the gate: a proposal's text and the facts it names."""
    found = await list_proposals(deps, credential, command)
    return dataclasses.replace(found, proposals=[_gated_proposal(p) for p in found.proposals])


async def consolidated(deps: Deps, credential: Credential, command: Consolidate) -> Consolidation:
    """``consolidate`` with the proposals it reports through the gate."""
    done = await consolidate(deps, credential, command)
    return dataclasses.replace(done, proposals=[_gated_proposal(p) for p in done.proposals])

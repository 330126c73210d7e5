"""The secret gate over what the brain's search and recall hand out: a fact stored before a rule
existed is redacted on its way out (its ``redacted`` kinds say so), as conversation memory is."""

from __future__ import annotations

import dataclasses

from memvault.core.brain.commands import Recall, SearchFacts
from memvault.core.brain.recall import recall
from memvault.core.brain.results import FoundFact, FoundFacts, RecallEntry, Recollection
from memvault.core.brain.scopes import Credential
from memvault.core.brain.search import search_facts
from memvault.core.deps import Deps
from memvault.core.redaction.recall import recalled


def _texts(content: str, snippet: str | None) -> tuple[str, str | None, set[str]] | None:
    """The content and snippet through the gate, and the kinds it found; None when it found none."""
    gates = recalled(content), recalled(snippet) if snippet else None
    kinds = {kind for gate in gates if gate is not None for kind in gate.kinds}
    if not kinds:
        return None
    return gates[0].text, gates[1].text if gates[1] is not None else snippet, kinds


def _gated_fact(fact: FoundFact) -> FoundFact:
    changed = _texts(fact.content, fact.snippet)
    if changed is None:
        return fact
    content, snippet, kinds = changed
    return dataclasses.replace(fact, content=content, snippet=snippet, redacted=sorted({*fact.redacted, *kinds}))


def _gated(entry: RecallEntry) -> RecallEntry:
    changed = _texts(entry.content, entry.snippet)
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

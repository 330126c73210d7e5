"""What each brain operation answers. ``wire.to_plain`` of a result is its public shape on every
surface (HTTP, RPC, MCP); the response schemas of the API are generated from these classes."""

from __future__ import annotations

from typing import Literal

from memvault.core.brain.wire import shape, spec

SearchMode = Literal["keyword", "hybrid"]


@shape
class Fact:
    """A fact as its reader sees it. A link to a row past the reader's wall reads null."""

    id: str
    entry_type: str = spec("user, feedback, project, reference, fact, skill or loop.")
    scope: str
    source: str
    source_tier: int = spec("0 is the most authoritative source.")
    content: str = spec("The fact, or the hook of a long body (`has_body`).")
    confidence: float
    valid_from: float = spec("When the fact became true, in epoch seconds.")
    superseded_at: float | None
    superseded_by: str | None
    has_body: bool
    content_hash: str
    updated_at: float
    pinned: bool
    importance: int
    redacted: list[str] = spec("Kinds of secret redacted from the fact, never the values.")


@shape
class FoundFact(Fact):
    score: float
    snippet: str | None = spec("The passage of a long body that matched.", default=None, omit=True)


@shape
class FactVersion(Fact):
    current: bool


@shape
class ExportedFact(FactVersion):
    body: str | None = spec("The whole text of a current fact with a long body.")


@shape
class Redaction:
    id: str
    kinds: list[str]


@shape
class Decision:
    """What the write-time bands decided for one incoming fact."""

    id: str | None = spec("The id stored for it; null when it was blocked.")
    decision: str = spec("stored, blocked, replace, merge, contradiction or keep_both.")
    existing: list[str] = spec("The stored facts the decision names.")
    judge_fallback: str | None = spec("Why the judge's reply was not used.", default=None, omit=True)


@shape
class FactsWritten:
    written: int
    unchanged: int
    updated: int
    revived: int
    superseded: int
    retired: int
    linked: int
    blocked: int
    ids: list[str] = spec("The ids stored, in the order the facts came.")
    redacted: list[Redaction]
    embedding: str = spec("done, none, or deferred (the nightly re-embed picks the facts up).")
    decisions: list[Decision]


@shape
class FoundFacts:
    mode: SearchMode
    as_of: float | None
    results: list[FoundFact]
    degraded: list[str] = spec("Channels that failed, so the answer came without them.")


@shape
class RecallEntry:
    id: str
    entry_type: str
    scope: str
    source: str
    content: str
    valid_from: float
    has_body: bool
    tokens: int
    snippet: str | None = spec(default=None, omit=True)
    score: float | None = spec(default=None, omit=True)


@shape
class RecallCore:
    version: str = spec("Changes when the pinned facts do.")
    entries: list[RecallEntry]
    tokens: int


@shape
class Recollection:
    """Pinned core, recent facts and what matches the query, within the budget."""

    core: RecallCore
    recent: list[RecallEntry]
    facts: list[RecallEntry]
    as_of: float = spec("The moment the brain was read at.")
    budget: int
    budget_used: int
    sources: list[str]
    degraded: list[str]


@shape
class FactBody:
    id: str
    content_hash: str
    body: str


@shape
class FactRetirement:
    """Why a writer retired a fact by hand."""

    reason: str = spec("As given, with any secret in it redacted.")
    retired_at: float
    retired_by: str = spec("The credential that retired it.")
    redacted: list[str] = spec("Kinds of secret redacted from the reason, never the values.")


@shape
class HistoryVersion(FactVersion):
    retirement: FactRetirement | None = spec("Present while the version stands retired by hand.", default=None,
                                             omit=True)


@shape
class FactHistory:
    id: str
    chain: list[HistoryVersion] = spec("The supersession chain through the fact, oldest first.")


@shape
class FactRetired:
    id: str
    status: Literal["retired"]
    retirement: FactRetirement


@shape
class ExportedFacts:
    facts: list[ExportedFact]


@shape
class SkillSummary:
    id: str
    slug: str
    scope: str
    version: int
    name: str
    description: str
    content_hash: str
    created_at: float
    superseded_at: float | None


@shape
class Skill(SkillSummary):
    content: str


@shape
class SkillRegistered:
    status: Literal["registered", "updated", "unchanged"]
    skill: Skill
    redacted: list[str]


@shape
class SkillFound:
    skill: Skill


@shape
class SkillList:
    skills: list[SkillSummary]


@shape
class SyncPushed(FactsWritten):
    direction: Literal["push"]


@shape
class Retirement:
    id: str
    source: str
    superseded_at: float | None
    superseded_by: str | None


@shape
class SyncPulled:
    direction: Literal["pull"]
    now: float = spec("Give it as `since` in the next pull.")
    items: list[ExportedFact]
    retired: list[Retirement]


@shape
class Chains:
    broken: list[str]
    cyclic: list[str]


@shape
class ProposedChange:
    id: str
    kind: str = spec("merge, retire, skill_merge or skill_retire.")
    scope: str
    fact_ids: list[str]
    keep_id: str | None
    text: str | None
    reason: str
    status: str


@shape
class Consolidation:
    dry_run: bool
    scopes: list[str]
    chains: Chains
    proposals: list[ProposedChange]
    to_reembed: int | None = spec("A dry run: facts a run would embed.", default=None, omit=True)
    reembedded: int | None = spec(default=None, omit=True)
    stale: int | None = spec("Open proposals that became stale.", default=None, omit=True)
    stored: int | None = spec("New proposals stored.", default=None, omit=True)
    hashed: int | None = spec(default=None, omit=True)
    degraded: list[str] | None = spec(default=None, omit=True)


@shape
class NamedFact:
    id: str
    content: str | None


@shape
class StoredProposal(ProposedChange):
    created_at: float
    decided_at: float | None
    decided_by: str | None
    facts: list[NamedFact] | None = spec("The facts a fact proposal names, with their text.", default=None, omit=True)


@shape
class ProposalList:
    proposals: list[StoredProposal]


@shape
class ProposalAccepted:
    id: str
    status: Literal["accepted"]
    kind: str
    successor: str | None
    superseded: list[str]


@shape
class ProposalRejected:
    id: str
    status: Literal["rejected"]

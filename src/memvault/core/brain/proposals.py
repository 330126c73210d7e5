"""Consolidation's proposals: merge these facts into this text, retire this fact as stale because…
A proposal is a row in ``proposals``; nothing it names changes until a writer of its scope accepts
it, and accepting re-checks that every fact (or skill) it names is still current, then applies it
in one atomic batch with the proposal's new status. Rejecting only records the decision."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.commands import ListProposals, ProposalRef, RegisterSkill, check_skill
from memvault.core.brain.fact_input import FactIn, WriteFacts, check_item
from memvault.core.brain.fact_vectors import FactText, embed_facts, retire_vectors
from memvault.core.brain.facts import hook_of, plan_request
from memvault.core.brain.freshness import bumps
from memvault.core.brain.plan import Plan, Statement, event
from memvault.core.brain.results import (
    NamedFact,
    ProposalAccepted,
    ProposalList,
    ProposalRejected,
    ProposedChange,
    StoredProposal,
)
from memvault.core.brain.rows import EntryType
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.brain.skills import COLUMNS as SKILL_COLUMNS
from memvault.core.brain.skills import embed_mirrors, plan_skill, skill_source
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, NotFound
from memvault.core.sql import in_batches, placeholders

# Where a merged fact comes from: never a synced source, so a folder sync cannot retire it.
MERGED_SOURCE = "consolidation"
# How long an accept may hold its claim on a proposal before a consolidation run hands it back.
CLAIM_SECONDS = 600
_REOPEN = "UPDATE proposals SET status = 'open', decided_at = NULL, decided_by = NULL WHERE status = 'applying' AND "
COLUMNS = "id, kind, scope, fact_ids, keep_id, text, reason, status, created_at, decided_at, decided_by"


@dataclass(frozen=True)
class Proposal:
    kind: str
    scope: str
    fact_ids: tuple[str, ...]  # merged or retired: fact ids, or skill ids for skill_* kinds
    reason: str
    keep_id: str | None = None  # what a retire keeps (and records as the successor)
    text: str | None = None  # a merge's wording

    @property
    def id(self) -> str:
        """The same proposal found again (the next night) has the same id, so it is stored once
        and a rejected one is not proposed again."""
        key = json.dumps([self.kind, self.scope, sorted(self.fact_ids), self.keep_id, self.text])
        return "prop-" + hashlib.md5(key.encode()).hexdigest()[:16]

    def out(self, status: str = "proposed") -> ProposedChange:
        return ProposedChange(self.id, self.kind, self.scope, list(self.fact_ids), self.keep_id, self.text, self.reason,
                              status)


def _row_out(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "fact_ids": json.loads(row["fact_ids"])}


async def store_proposals(deps: Deps, proposals: Sequence[Proposal]) -> int:
    """Insert the proposals not stored before (whatever became of them); returns how many were new."""
    if not proposals:
        return 0
    known: set[str] = set()
    ids = [p.id for p in proposals]
    for group in in_batches(ids):
        rows = await deps.db.query(f"SELECT id FROM proposals WHERE id IN ({placeholders(len(group))})", list(group))
        known.update(row["id"] for row in rows)
    now = deps.clock()
    fresh = [p for p in dict((p.id, p) for p in proposals).values() if p.id not in known]
    if fresh:
        await deps.db.batch([
            ("INSERT OR IGNORE INTO proposals (id, kind, scope, fact_ids, keep_id, text, reason, status, created_at) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)",
             (p.id, p.kind, p.scope, json.dumps(list(p.fact_ids)), p.keep_id, p.text, p.reason, now))
            for p in fresh
        ])
    return len(fresh)


async def list_proposals(deps: Deps, credential: Credential, command: ListProposals) -> ProposalList:
    """The proposals of the credential's scopes, newest first, with the text of each fact they name."""
    wall, params = scope_filter(credential)
    where = wall if command.status == "all" else f"{wall} AND status = ?"
    rows = await deps.db.query(
        f"SELECT {COLUMNS} FROM proposals WHERE {where} ORDER BY created_at DESC, id LIMIT ?",
        [*params, *([] if command.status == "all" else [command.status]), command.limit])
    proposals = [_row_out(row) for row in rows]
    named = {fid for p in proposals if not p["kind"].startswith("skill_") for fid in [*p["fact_ids"], p["keep_id"]] if fid}
    texts = await _fact_texts(deps, credential, named)
    out = []
    for p in proposals:
        facts = None
        if not p["kind"].startswith("skill_"):
            facts = [NamedFact(fid, texts.get(fid)) for fid in [*p["fact_ids"], *filter(None, [p["keep_id"]])]]
        out.append(StoredProposal(**p, facts=facts))
    return ProposalList(out)


async def _fact_texts(deps: Deps, credential: Credential, ids: set[str]) -> dict[str, str]:
    wall, params = scope_filter(credential)
    found: dict[str, str] = {}
    for group in in_batches(sorted(ids)):
        for row in await deps.db.query(
            f"SELECT id, content FROM memory WHERE {wall} AND id IN ({placeholders(len(group))})", [*params, *group]):
            found[row["id"]] = row["content"]
    return found


async def _proposal(deps: Deps, credential: Credential, proposal_id: str) -> dict[str, Any]:
    credential.require_writer()
    wall, params = scope_filter(credential)
    rows = await deps.db.query(f"SELECT {COLUMNS} FROM proposals WHERE {wall} AND id = ?", [*params, proposal_id])
    if not rows:
        # The same answer for "absent" and "behind a wall".
        raise NotFound("no such proposal")
    row = _row_out(rows[0])
    if row["status"] != "open":
        raise Conflict(f"proposal {proposal_id} is already {row['status']}")
    return row


def _decided(proposal: dict[str, Any], status: str, at: float, by: str, was: str) -> Statement:
    return ("UPDATE proposals SET status = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = ?",
            (status, at, by, proposal["id"], was))


def _taken(proposal: dict[str, Any]) -> Conflict:
    return Conflict(f"proposal {proposal['id']} is being decided or already decided by another request")


async def reject_proposal(deps: Deps, credential: Credential, ref: ProposalRef) -> ProposalRejected:
    proposal = await _proposal(deps, credential, ref.id)
    rejected = await deps.db.execute(
        "UPDATE proposals SET status = 'rejected', decided_at = ?, decided_by = ? WHERE id = ? AND status = 'open'",
        (deps.clock(), credential.name, proposal["id"]))
    if not rejected:
        raise _taken(proposal)
    return ProposalRejected(proposal["id"], "rejected")


async def accept_proposal(deps: Deps, credential: Credential, ref: ProposalRef) -> ProposalAccepted:
    proposal = await _proposal(deps, credential, ref.id)
    if proposal["kind"] in ("merge", "retire"):
        return await _accept_facts(deps, credential, proposal)
    return await _accept_skills(deps, credential, proposal)


async def _apply(deps: Deps, credential: Credential, proposal: dict[str, Any], statements: list[Statement]) -> None:
    """Claim the proposal (only one request may apply it), then run its statements with its new
    status in one batch; a batch that fails hands the proposal back. A claim left by a crash is
    handed back by the next consolidation run (``mark_stale``)."""
    claimed = await deps.db.execute(
        "UPDATE proposals SET status = 'applying', decided_at = ?, decided_by = ? WHERE id = ? AND status = 'open'",
        (deps.clock(), credential.name, proposal["id"]))
    if not claimed:
        raise _taken(proposal)
    try:
        await deps.db.batch([*statements, _decided(proposal, "accepted", deps.clock(), credential.name, "applying")])
    except BaseException:
        await deps.db.execute(_REOPEN + "id = ?", (proposal["id"],))
        raise


async def current_rows(deps: Deps, table: str, columns: str, scope: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Which of ``ids`` name current rows of ``scope`` in ``table`` (``memory`` or ``skills``), by id."""
    found: dict[str, dict[str, Any]] = {}
    for group in in_batches(sorted(set(ids))):
        for row in await deps.db.query(
            f"SELECT {columns} FROM {table} WHERE scope = ? AND superseded_at IS NULL "
            f"AND id IN ({placeholders(len(group))})", [scope, *group]):
            found[row["id"]] = row
    return found


async def current_facts(deps: Deps, scope: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    return await current_rows(deps, "memory", "id, scope, source, entry_type, pinned, importance", scope, ids)


async def current_skills(deps: Deps, scope: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    return await current_rows(deps, "skills", SKILL_COLUMNS, scope, ids)


def _stale(named: Sequence[str], current: dict[str, Any]) -> str | None:
    gone = [fid for fid in named if fid not in current]
    return f"no longer current: {', '.join(gone)}" if gone else None


async def _accept_facts(deps: Deps, credential: Credential, proposal: dict[str, Any]) -> ProposalAccepted:
    scope, ids = proposal["scope"], list(proposal["fact_ids"])
    named = [*ids, *filter(None, [proposal["keep_id"]])]
    current = await current_facts(deps, scope, named)
    stale = _stale(named, current)
    if stale:
        raise Conflict(f"proposal {proposal['id']} is stale: {stale}")
    if proposal["kind"] == "retire":
        plan = Plan(deps.clock(), credential.name)
        heir = proposal["keep_id"]
    else:
        merged = [current[fid] for fid in ids]
        item = check_item(FactIn(content=proposal["text"], source=MERGED_SOURCE, scope=scope,
                                 entry_type=EntryType(merged[0]["entry_type"]),
                                 pinned=any(bool(r["pinned"]) for r in merged),
                                 importance=max(int(r["importance"]) for r in merged)), FactIn(), credential, deps.settings)
        plan = await plan_request(deps, credential, WriteFacts((item,), False, None, (item.source,)), bands=False)
        # The id its scope already stores the merged text by, if it does.
        heir = plan.incoming[0].id
    for fid in ids:
        if fid != heir:
            plan.retire("superseded", current[fid], plan.now, heir)
    await _apply(deps, credential, proposal, [*plan.statements, *bumps([scope])])
    hook_chars = deps.tuning.brain_hook_chars
    if plan.touched:
        await embed_facts(deps, [FactText(i.id, hook_of(i.content, hook_chars), i.scope, i.entry_type)
                                 for i in plan.touched], replaced=True)
    else:
        await retire_vectors(deps)
    return ProposalAccepted(proposal["id"], "accepted", proposal["kind"], heir, [fid for fid in ids if fid != heir])


def _retire_skill(skill: dict[str, Any], heir: str, now: float, actor: str) -> list[Statement]:
    return [("UPDATE skills SET superseded_at = ?, superseded_by = ? WHERE id = ? AND superseded_at IS NULL",
             (now, heir, skill["id"])),
            event(now, actor, "skill_retired", skill["id"], skill["scope"], f"skill:{skill['slug']}", superseded_by=heir)]


async def _mirror_rows(deps: Deps, scope: str, skills: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The current brain facts mirroring ``skills``."""
    sources = [skill_source(scope, s["slug"]) for s in skills]
    if not sources:
        return []
    return await deps.db.query(
        f"SELECT id, scope, source FROM memory WHERE scope = ? AND superseded_at IS NULL "
        f"AND source IN ({placeholders(len(sources))})", [scope, *sources])


async def _accept_skills(deps: Deps, credential: Credential, proposal: dict[str, Any]) -> ProposalAccepted:
    """skill_retire: the named skills (and their mirrored facts) are superseded by the kept one.
    skill_merge: the kept skill's slug gets a new version saying the merged text; the others are
    superseded by it."""
    scope, ids, keep_id = proposal["scope"], list(proposal["fact_ids"]), proposal["keep_id"]
    current = await current_skills(deps, scope, [*ids, keep_id])
    stale = _stale([*ids, keep_id], current)
    if stale:
        raise Conflict(f"proposal {proposal['id']} is stale: {stale}")
    keep = current[keep_id]
    statements: list[Statement] = []
    added: Plan | None = None
    if proposal["kind"] == "skill_merge":
        merged = check_skill(RegisterSkill(slug=keep["slug"], scope=scope, name=keep["name"],
                                           description=keep["description"], content=proposal["text"]),
                             credential, deps.settings)
        planned = await plan_skill(deps, credential, merged)
        statements += planned.statements
        added = planned.mirror
        heir = planned.answer.skill.id
        heir_fact = next((item.id for item in added.touched), None)
    else:
        heir = keep_id
        heir_fact = next((row["id"] for row in await _mirror_rows(deps, scope, [keep])), None)
    retiring = Plan(deps.clock(), credential.name)
    retired = [current[sid] for sid in ids if sid != keep_id]
    for skill in retired:
        statements += _retire_skill(skill, heir, retiring.now, credential.name)
    for row in await _mirror_rows(deps, scope, retired):
        retiring.retire("retired", row, retiring.now, heir_fact)
    await _apply(deps, credential, proposal, [*statements, *retiring.statements, *bumps([scope])])
    if added is not None:
        await embed_mirrors(deps, added)
    await retire_vectors(deps)
    return ProposalAccepted(proposal["id"], "accepted", proposal["kind"], heir, [s["id"] for s in retired])


async def mark_stale(deps: Deps, scopes: Sequence[str]) -> int:
    """Open proposals naming something no longer current become ``stale``: they can never be
    accepted. Claims older than ``CLAIM_SECONDS`` (their request died) are handed back first."""
    now, stale = deps.clock(), []
    for scope in scopes:
        await deps.db.execute(_REOPEN + "scope = ? AND decided_at < ?", (scope, now - CLAIM_SECONDS))
    for scope in scopes:
        rows = [_row_out(row) for row in await deps.db.query(
            f"SELECT {COLUMNS} FROM proposals WHERE scope = ? AND status = 'open'", [scope])]
        named = {row["id"]: [*row["fact_ids"], *filter(None, [row["keep_id"]])] for row in rows}
        skills = {fid for row in rows if row["kind"].startswith("skill_") for fid in named[row["id"]]}
        facts = {fid for row in rows if not row["kind"].startswith("skill_") for fid in named[row["id"]]}
        # Two reads per scope, whatever the number of open proposals.
        current = {**await current_facts(deps, scope, sorted(facts)), **await current_skills(deps, scope, sorted(skills))}
        stale += [_decided(row, "stale", now, "consolidation", "open") for row in rows if _stale(named[row["id"]], current)]
    if stale:
        await deps.db.batch(stale)
    return len(stale)

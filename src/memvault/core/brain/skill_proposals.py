"""Skills proposed from finished work, gated by a writer's decision. Proposing stores the proposal
with what it may duplicate (``skill_candidates``) and registers nothing; confirming registers it
(under its own slug, or as the next version of a candidate skill) in one atomic batch with the
proposal's new status; rejecting records the decision. A proposal outside the caller's walls is
absent to it; one already decided answers 409."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memvault.core.brain.commands import RegisterSkill, check_skill
from memvault.core.brain.plan import Statement, event
from memvault.core.brain.proposals import CLAIM_SECONDS
from memvault.core.brain.results import Skill
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.brain.skill_candidates import find_candidates
from memvault.core.brain.skill_proposal_input import (
    CheckedProposal,
    ConfirmSkillProposal,
    ListSkillProposals,
    RejectSkillProposal,
)
from memvault.core.brain.skill_proposal_results import (
    SkillCandidate,
    SkillProposal,
    SkillProposalConfirmed,
    SkillProposalList,
    SkillProposalRejected,
    SkillProposed,
)
from memvault.core.brain.skills import embed_mirrors, plan_skill
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidField, NotFound

COLUMNS = ("id, scope, slug, title, triggers, steps, source_trail, candidates, redacted, status, reason, skill_id, "
           "created_at, created_by, decided_at, decided_by")
LISTS = ("triggers", "steps", "source_trail", "candidates", "redacted")
_PENDING = "(status = 'pending' OR (status = 'confirming' AND decided_at < ?))"


def proposal_id(proposal: CheckedProposal) -> str:
    """The same proposal made again has the same id: it is stored once, and one rejected stays so."""
    key = json.dumps([proposal.scope, proposal.slug, proposal.title, proposal.triggers, proposal.steps])
    return "sprop-" + hashlib.md5(key.encode()).hexdigest()[:16]


def _out(row: dict[str, Any], credential: Credential) -> SkillProposal:
    fields = {**row, **{name: json.loads(row[name]) for name in LISTS}}
    # Found with the proposer's walls: a reader of the proposal sees only what it may read.
    fields["candidates"] = [SkillCandidate(**c) for c in fields["candidates"] if c["scope"] in credential.scopes]
    fields["status"] = "pending" if row["status"] == "confirming" else row["status"]
    return SkillProposal(**fields)


async def _read(deps: Deps, credential: Credential, proposal_id: str) -> dict[str, Any]:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(f"SELECT {COLUMNS} FROM skill_proposals WHERE {wall} AND id = ?", [*params, proposal_id])
    if not rows:
        raise NotFound("no such skill proposal")
    return rows[0]


async def propose_skill(deps: Deps, credential: Credential, proposal: CheckedProposal) -> SkillProposed:
    credential.require_writer()
    new_id = proposal_id(proposal)
    wall, params = scope_filter(credential)
    known = await deps.db.query(f"SELECT {COLUMNS} FROM skill_proposals WHERE {wall} AND id = ?", [*params, new_id])
    if known:
        return SkillProposed(_out(known[0], credential))
    candidates = await find_candidates(deps, credential, proposal)
    now = deps.clock()
    lists = [list(proposal.triggers), list(proposal.steps), list(proposal.source_trail),
             [_plain(c) for c in candidates], list(proposal.redacted)]
    await deps.db.batch([
        ("INSERT OR IGNORE INTO skill_proposals (id, scope, slug, title, triggers, steps, source_trail, candidates, "
         "redacted, status, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
         [new_id, proposal.scope, proposal.slug, proposal.title, *(json.dumps(v) for v in lists), now,
          credential.name]),
        event(now, credential.name, "skill_proposed", new_id, proposal.scope, f"skill:{proposal.slug}",
              candidates=len(candidates)),
    ])
    return SkillProposed(_out(await _read(deps, credential, new_id), credential))


def _plain(candidate: SkillCandidate) -> dict[str, Any]:
    return {key: value for key, value in vars(candidate).items() if value is not None}


async def list_skill_proposals(deps: Deps, credential: Credential, command: ListSkillProposals) -> SkillProposalList:
    """The proposals of the credential's scopes, newest first; pending ones by default."""
    wall, params = scope_filter(credential)
    status = {"pending": ("status IN ('pending', 'confirming')", []), "all": ("1 = 1", [])}.get(
        command.status, ("status = ?", [command.status]))
    rows = await deps.db.query(
        f"SELECT {COLUMNS} FROM skill_proposals WHERE {wall} AND {status[0]} ORDER BY created_at DESC, id LIMIT ?",
        [*params, *status[1], command.limit])
    return SkillProposalList([_out(row, credential) for row in rows])


async def _undecided(deps: Deps, credential: Credential, proposal_id: str) -> dict[str, Any]:
    credential.require_writer()
    row = await _read(deps, credential, proposal_id)
    held = row["status"] == "confirming" and row["decided_at"] >= deps.clock() - CLAIM_SECONDS
    if row["status"] in ("confirmed", "rejected") or held:
        raise Conflict(f"skill proposal {proposal_id} is already {'being confirmed' if held else row['status']}")
    return row


def _target(row: dict[str, Any], version_of: str | None, credential: Credential) -> tuple[str, str, str | None]:
    """Where a confirmation registers the skill: (scope, slug, the skill id it must still be current at)."""
    if version_of is None:
        return row["scope"], row["slug"], None
    named = [c for c in json.loads(row["candidates"]) if c["kind"] == "skill" and c["slug"] == version_of
             and c["scope"] in credential.scopes]
    if len(named) > 1:
        named = [c for c in named if c["scope"] == row["scope"]]
    if len(named) != 1:
        offered = sorted({c["slug"] for c in json.loads(row["candidates"]) if c["kind"] == "skill"
                          and c["scope"] in credential.scopes})
        raise InvalidField(f"version_of must name one skill among the proposal's candidates"
                           f"{': ' + ', '.join(offered) if offered else ' (it has none)'}")
    credential.require_scope(named[0]["scope"])
    return named[0]["scope"], version_of, named[0]["id"]


async def _check_target(deps: Deps, credential: Credential, scope: str, slug: str, expected: str | None) -> None:
    """Refuse a confirmation that would overwrite what the writer did not see: a skill registered
    under the proposal's slug since, or a candidate that changed or was retired since."""
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT id, version FROM skills WHERE {wall} AND scope = ? AND slug = ? AND superseded_at IS NULL",
        [*params, scope, slug])
    current = rows[0] if rows else None
    if expected is None and current is not None:
        raise Conflict(f"a skill {slug!r} already exists in scope {scope!r}: confirm with version_of to make this "
                       f"its next version, or propose it under another slug")
    if expected is not None and (current is None or current["id"] != expected):
        now = "was retired" if current is None else f"is at version {current['version']}"
        raise Conflict(f"skill {slug!r} changed since the proposal was made (it {now}): read it, then propose again")


async def confirm_skill_proposal(deps: Deps, credential: Credential, command: ConfirmSkillProposal
                                 ) -> SkillProposalConfirmed:
    row = await _undecided(deps, credential, command.id)
    scope, slug, expected = _target(row, command.version_of, credential)
    await _check_target(deps, credential, scope, slug, expected)
    triggers, steps = json.loads(row["triggers"]), json.loads(row["steps"])
    skill = check_skill(RegisterSkill(slug=slug, scope=scope, name=row["title"],
                                      description="Use when: " + "; ".join(triggers),
                                      content="\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))),
                        credential, deps.settings)
    planned = await plan_skill(deps, credential, skill)
    registered = planned.answer.skill
    now = deps.clock()
    claimed = await deps.db.execute(
        f"UPDATE skill_proposals SET status = 'confirming', decided_at = ?, decided_by = ? WHERE id = ? AND {_PENDING}",
        (now, credential.name, row["id"], now - CLAIM_SECONDS))
    if not claimed:
        raise Conflict(f"skill proposal {row['id']} is being decided or already decided by another request")
    try:
        await deps.db.batch([*planned.statements, *_confirmed(row, registered, now, credential.name)])
    except BaseException:
        await deps.db.execute("UPDATE skill_proposals SET status = 'pending', decided_at = NULL, decided_by = NULL "
                              "WHERE id = ? AND status = 'confirming'", (row["id"],))
        raise
    if planned.statements:
        await embed_mirrors(deps, planned.mirror)
    return SkillProposalConfirmed(row["id"], "confirmed", planned.answer.status, registered)


def _confirmed(row: dict[str, Any], skill: Skill, at: float, actor: str) -> list[Statement]:
    return [("UPDATE skill_proposals SET status = 'confirmed', decided_at = ?, decided_by = ?, skill_id = ? "
             "WHERE id = ? AND status = 'confirming'", (at, actor, skill.id, row["id"])),
            event(at, actor, "skill_proposal_confirmed", row["id"], row["scope"], f"skill:{skill.slug}",
                  skill_id=skill.id, version=skill.version)]


async def reject_skill_proposal(deps: Deps, credential: Credential, command: RejectSkillProposal
                                ) -> SkillProposalRejected:
    row = await _undecided(deps, credential, command.id)
    now = deps.clock()
    rejected = await deps.db.execute(
        "UPDATE skill_proposals SET status = 'rejected', decided_at = ?, decided_by = ?, reason = ? "
        f"WHERE id = ? AND {_PENDING}", (now, credential.name, command.reason, row["id"], now - CLAIM_SECONDS))
    if not rejected:
        raise Conflict(f"skill proposal {row['id']} is being decided or already decided by another request")
    return SkillProposalRejected(row["id"], "rejected", command.reason)

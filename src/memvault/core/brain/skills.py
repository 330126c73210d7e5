"""Skills: named, versioned instructions, idempotent by (scope, slug). Registering changed content
bumps the version and supersedes the old row; each current skill is also a brain fact
(``entry_type='skill'``, source ``skill:<scope>/<slug>``) so search and recall find it.

Every field passes the secret gate before anything is written: a secret in an identifier (slug,
scope) is refused, one in the text (name, description, content) is redacted. The skill rows, their
event and the mirrored fact are written in one atomic batch; embedding follows it."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.commands import CheckedSkill, GetSkill, ListSkills
from memvault.core.brain.fact_input import MAX_CONTENT_CHARS, FactIn, WriteFactsIn, check_batch
from memvault.core.brain.fact_vectors import FactText, embed_facts
from memvault.core.brain.facts import hook_of, plan_facts
from memvault.core.brain.plan import Plan, Statement, event
from memvault.core.brain.results import Skill, SkillFound, SkillList, SkillRegistered, SkillSummary
from memvault.core.brain.rows import EntryType
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import NotFound, PayloadTooLarge
from memvault.core.retry import is_transient_or_raced, retry

COLUMNS = "id, slug, scope, version, name, description, content, content_hash, created_at, superseded_at, superseded_by"

# The versions current at a moment: registered by then, not yet superseded.
AS_OF_WALL = "created_at <= ? AND (superseded_at IS NULL OR superseded_at > ?)"


def skill_id(scope: str, slug: str, version: int) -> str:
    return f"skill-{hashlib.md5(f'{scope}|{slug}'.encode()).hexdigest()[:12]}-v{version}"


def _summary(row: Mapping[str, Any]) -> dict[str, Any]:
    keys = ["id", "slug", "scope", "version", "name", "description", "content_hash", "created_at", "superseded_at"]
    return {k: row[k] for k in keys}


def _skill(row: Mapping[str, Any]) -> Skill:
    return Skill(**_summary(row), content=row["content"])


@dataclass
class SkillPlan:
    """A skill registration's statements (the skill rows, their event, the mirrored fact), unrun,
    and the answer to give once they are."""

    statements: list[Statement]
    mirror: Plan
    answer: SkillRegistered


async def plan_skill(deps: Deps, credential: Credential, skill: CheckedSkill) -> SkillPlan:
    """Every read of registering a skill; the statements are left to the caller, which may run
    them in a larger batch (accepting a consolidation proposal)."""
    credential.require_writer()
    slug, scope, name, description, content = skill.slug, skill.scope, skill.name, skill.description, skill.content
    fact = f"Skill {name} ({slug}): {description}\n\n{content}"
    if len(fact) > MAX_CONTENT_CHARS:
        raise PayloadTooLarge(f"name, description and content together are longer than {MAX_CONTENT_CHARS} characters")
    digest = hashlib.sha256(f"{name}\n{description}\n{content}".encode()).hexdigest()
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT {COLUMNS} FROM skills WHERE {wall} AND scope = ? AND slug = ? ORDER BY version DESC LIMIT 1",
        [*params, scope, slug],
    )
    latest = rows[0] if rows else None
    redacted = list(skill.redacted)
    if latest is not None and latest["superseded_at"] is None and latest["content_hash"] == digest:
        return SkillPlan([], Plan(deps.clock(), credential.name), SkillRegistered("unchanged", _skill(latest), redacted))
    now, version = deps.clock(), (latest["version"] + 1 if latest else 1)
    new_id = skill_id(scope, slug, version)
    statements: list[Statement] = []
    if latest is not None and latest["superseded_at"] is None:
        statements.append(("UPDATE skills SET superseded_at = ?, superseded_by = ? WHERE id = ? AND superseded_at IS NULL",
                           [now, new_id, latest["id"]]))
    statements.append((f"INSERT INTO skills ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                       [new_id, slug, scope, version, name, description, content, digest, now]))
    statements.append(event(now, credential.name, "skill_registered", new_id, scope, f"skill:{slug}",
                            version=version, content_hash=digest))
    mirrored = check_batch(WriteFactsIn(facts=[FactIn(content=fact, entry_type=EntryType.SKILL)],
                                        source=skill_source(scope, slug), scope=scope, reconcile=True),
                           credential, deps.settings, "content")
    plan = await plan_facts(deps, credential, mirrored)
    # The mirrored fact passed the gate whole; whatever it caught is reported with the fields'.
    redacted = sorted({*redacted, *(kind for item in mirrored.items for kind in item.redacted)})
    row = dict(zip([c.strip() for c in COLUMNS.split(",")],
                   [new_id, slug, scope, version, name, description, content, digest, now, None, None], strict=True))
    answer = SkillRegistered("registered" if version == 1 else "updated", _skill(row), redacted)
    return SkillPlan([*statements, *plan.statements], plan, answer)


async def embed_mirrors(deps: Deps, plan: Plan) -> None:
    """After a skill's batch: embed its mirrored fact (and retire the vectors of the one it replaced)."""
    hook_chars = deps.tuning.brain_hook_chars
    await embed_facts(deps, [FactText(i.id, hook_of(i.content, hook_chars), i.scope, i.entry_type) for i in plan.touched],
                      replaced=plan.replaced)


async def register_skill(deps: Deps, credential: Credential, skill: CheckedSkill) -> SkillRegistered:
    async def plan_and_write() -> SkillPlan:
        # Planned again after losing a race: a concurrent registration of the same slug took the
        # version this one planned, so this one becomes the next (or is unchanged, if the same).
        planned = await plan_skill(deps, credential, skill)
        if planned.statements:
            await deps.db.batch(planned.statements)
        return planned

    planned = await retry(plan_and_write, is_transient_or_raced)
    if planned.statements:
        await embed_mirrors(deps, planned.mirror)
    return planned.answer


def skill_source(scope: str, slug: str) -> str:
    """The source of the brain fact mirroring a skill."""
    return f"skill:{scope}/{slug}"


async def get_skill(deps: Deps, credential: Credential, command: GetSkill) -> SkillFound:
    wall, params = scope_filter(credential)
    extra: list[Any] = [*params, command.slug]
    where = f"{wall} AND slug = ?"
    if command.scope is not None:
        where, extra = f"{where} AND scope = ?", [*extra, command.scope]
    if command.version is not None:
        where, extra = f"{where} AND version = ?", [*extra, command.version]
    if command.as_of is not None:
        where, extra = f"{where} AND {AS_OF_WALL}", [*extra, command.as_of, command.as_of]
    elif command.version is None:
        where += " AND superseded_at IS NULL"
    rows = await deps.db.query(f"SELECT {COLUMNS} FROM skills WHERE {where} ORDER BY created_at DESC LIMIT 1", extra)
    if not rows:
        raise NotFound("no such skill")
    return SkillFound(_skill(rows[0]))


async def list_skills(deps: Deps, credential: Credential, command: ListSkills) -> SkillList:
    wall, params = scope_filter(credential)
    when, at = ("superseded_at IS NULL", []) if command.as_of is None else (AS_OF_WALL, [command.as_of] * 2)
    rows = await deps.db.query(f"SELECT {COLUMNS} FROM skills WHERE {wall} AND {when} ORDER BY slug, scope",
                               [*params, *at])
    return SkillList([SkillSummary(**_summary(row)) for row in rows])

"""Skills: named, versioned instructions, idempotent by (scope, slug). Registering changed content
bumps the version and supersedes the old row; each current skill is also a brain fact
(``entry_type='skill'``, source ``skill:<scope>/<slug>``) so search and recall find it.

Every field passes the secret gate before anything is written: a secret in an identifier (slug,
scope) is refused, one in the text (name, description, content) is redacted. The skill rows, their
event and the mirrored fact are written in one atomic batch; embedding follows it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.fact_input import MAX_CONTENT_CHARS
from memvault.core.brain.fact_vectors import FactText, embed_facts
from memvault.core.brain.facts import hook_of, plan_facts
from memvault.core.brain.plan import Plan, Statement, event
from memvault.core.brain.scopes import Credential, check_scope, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput, NotFound, PayloadTooLarge
from memvault.core.redaction import redact, refuse_secret
from memvault.core.settings import Settings

SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
FIELDS = frozenset({"slug", "name", "description", "content", "scope"})
COLUMNS = "id, slug, scope, version, name, description, content, content_hash, created_at, superseded_at, superseded_by"


def skill_id(scope: str, slug: str, version: int) -> str:
    return f"skill-{hashlib.md5(f'{scope}|{slug}'.encode()).hexdigest()[:12]}-v{version}"


def _slug(value: Any) -> str:
    if not isinstance(value, str) or not SLUG.match(value):
        raise InvalidInput("slug must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
    return value


def _scope(payload: Mapping[str, Any], credential: Credential, settings: Settings) -> str:
    scope = payload.get("scope")
    if isinstance(scope, str):
        refuse_secret("scope", scope)
    if scope is None and len(credential.scopes) == 1:
        scope = next(iter(credential.scopes))
    scope = check_scope(scope, settings)
    credential.require_scope(scope)
    return scope


def _text(payload: Mapping[str, Any], name: str, default: str | None, limit: int) -> tuple[str, tuple[str, ...]]:
    value = payload.get(name, default)
    if not isinstance(value, str) or (name == "content" and not value.strip()):
        raise InvalidInput(f"{name} must be {'non-empty ' if name == 'content' else ''}text")
    if len(value) > limit:
        raise InvalidInput(f"{name} is longer than {limit} characters")
    gate = redact(value.strip())
    return gate.text, gate.kinds


def _out(row: Mapping[str, Any], with_content: bool = True) -> dict[str, Any]:
    keys = ["id", "slug", "scope", "version", "name", "description", "content_hash", "created_at", "superseded_at"]
    return {k: row[k] for k in [*keys, *(["content"] if with_content else [])]}


@dataclass
class SkillPlan:
    """A skill registration's statements (the skill rows, their event, the mirrored fact), unrun,
    and the answer to give once they are."""

    statements: list[Statement]
    mirror: Plan
    answer: dict[str, Any]


async def plan_skill(deps: Deps, credential: Credential, payload: Any) -> SkillPlan:
    """Every check and read of registering a skill; the statements are left to the caller, which
    may run them in a larger batch (accepting a consolidation proposal)."""
    credential.require_writer()
    if not isinstance(payload, Mapping):
        raise InvalidInput("the body must be a JSON object")
    unknown = set(payload) - FIELDS
    if unknown:
        raise InvalidInput(f"unknown skill fields: {', '.join(sorted(unknown))}")
    if isinstance(payload.get("slug"), str):
        refuse_secret("slug", payload["slug"])
    slug = _slug(payload.get("slug"))
    scope = _scope(payload, credential, deps.settings)
    content, kinds = _text(payload, "content", None, MAX_CONTENT_CHARS)
    name, name_kinds = _text(payload, "name", slug, 200)
    description, description_kinds = _text(payload, "description", "", 2000)
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
    redacted = sorted(set(kinds + name_kinds + description_kinds))
    if latest is not None and latest["superseded_at"] is None and latest["content_hash"] == digest:
        return SkillPlan([], Plan(deps.clock(), credential.name), {"status": "unchanged", "skill": _out(latest),
                                                                   "redacted": redacted})
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
    mirrored, plan = await plan_facts(deps, credential, {
        "facts": [{"content": fact, "entry_type": "skill"}], "source": skill_source(scope, slug), "scope": scope,
        "reconcile": True,
    })
    # The mirrored fact passed the gate whole; whatever it caught is reported with the fields'.
    redacted = sorted({*redacted, *(kind for item in mirrored.items for kind in item.redacted)})
    row = dict(zip([c.strip() for c in COLUMNS.split(",")],
                   [new_id, slug, scope, version, name, description, content, digest, now, None, None], strict=True))
    answer = {"status": "registered" if version == 1 else "updated", "skill": _out(row), "redacted": redacted}
    return SkillPlan([*statements, *plan.statements], plan, answer)


async def embed_mirrors(deps: Deps, plan: Plan) -> None:
    """After a skill's batch: embed its mirrored fact (and retire the vectors of the one it replaced)."""
    hook_chars = deps.tuning.brain_hook_chars
    await embed_facts(deps, [FactText(i.id, hook_of(i.content, hook_chars), i.scope, i.entry_type) for i in plan.touched],
                      replaced=plan.replaced)


async def register_skill(deps: Deps, credential: Credential, payload: Any) -> dict[str, Any]:
    planned = await plan_skill(deps, credential, payload)
    if planned.statements:
        await deps.db.batch(planned.statements)
        await embed_mirrors(deps, planned.mirror)
    return planned.answer


def skill_source(scope: str, slug: str) -> str:
    """The source of the brain fact mirroring a skill."""
    return f"skill:{scope}/{slug}"


async def get_skill(deps: Deps, credential: Credential, slug: Any, scope: Any = None, version: Any = None) -> dict[str, Any]:
    wall, params = scope_filter(credential)
    extra: list[Any] = [*params, _slug(slug)]
    where = f"{wall} AND slug = ?"
    if scope is not None:
        where, extra = f"{where} AND scope = ?", [*extra, scope]
    if version is None:
        where += " AND superseded_at IS NULL"
    else:
        try:
            where, extra = f"{where} AND version = ?", [*extra, int(version)]
        except (TypeError, ValueError) as exc:
            raise InvalidInput("version must be an integer") from exc
    rows = await deps.db.query(f"SELECT {COLUMNS} FROM skills WHERE {where} ORDER BY created_at DESC LIMIT 1", extra)
    if not rows:
        raise NotFound("no such skill")
    return {"skill": _out(rows[0])}


async def list_skills(deps: Deps, credential: Credential) -> dict[str, Any]:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT {COLUMNS} FROM skills WHERE {wall} AND superseded_at IS NULL ORDER BY slug, scope", params
    )
    return {"skills": [_out(row, with_content=False) for row in rows]}

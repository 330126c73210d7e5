"""The input of the skill proposal operations (propose, list, confirm, reject) and their parsers:
plain data in, the typed command out, or ``InvalidField`` naming the field. A proposal's every
text field passes the secret gate here, before anything is stored."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from memvault.core.brain.commands import MAX_LIMIT, RESERVED_SLUGS, check_slug, unreserved, writable_scope
from memvault.core.brain.fact_input import SCOPE
from memvault.core.brain.scopes import Credential
from memvault.core.brain.wire import parse_fields, shape, spec
from memvault.core.errors import InvalidField
from memvault.core.redaction import redact, refuse_secret
from memvault.core.settings import Settings

MAX_TITLE_CHARS = 200
MAX_TRIGGERS, MAX_TRIGGER_CHARS = 20, 200
MAX_STEPS, MAX_STEP_CHARS = 50, 2000
MAX_TRAIL, MAX_TRAIL_CHARS = 20, 500


@shape
class ProposeSkill:
    """A skill learned from finished work, held as a proposal until a writer confirms it; writer credentials only."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{
        "title": "Renew the car insurance", "scope": "family",
        "triggers": ["car insurance renewal", "insurance letter arrived"],
        "steps": ["Compare the renewal quote with last year's.", "Ask two other insurers for a quote.",
                  "Renew or switch before the due date."],
        "source_trail": ["task:2291", "session:kitchen-tablet"],
    }]

    title: str = spec("What the skill does, in a few words.", nonblank=True, max_chars=MAX_TITLE_CHARS)
    triggers: list[str] = spec(f"1-{MAX_TRIGGERS} phrases that should bring the skill to mind (each at most "
                               f"{MAX_TRIGGER_CHARS} characters).")
    steps: list[str] = spec(f"1-{MAX_STEPS} steps, in order (each at most {MAX_STEP_CHARS} characters).")
    source_trail: list[str] = spec(f"1-{MAX_TRAIL} pointers to where it was learned: task, session or message ids, "
                                   f"or free text (each at most {MAX_TRAIL_CHARS} characters).")
    scope: str | None = spec(SCOPE + " Optional for a credential of one scope.", default=None)
    slug: str | None = spec("The slug to register it under; derived from the title without it.", default=None)


@dataclass(frozen=True)
class CheckedProposal:
    """A skill proposal once parsed: every field gated, its scope the credential's to write."""

    scope: str
    slug: str
    title: str
    triggers: tuple[str, ...]
    steps: tuple[str, ...]
    source_trail: tuple[str, ...]
    redacted: tuple[str, ...]


@shape
class ListSkillProposals:
    status: Literal["pending", "confirmed", "rejected", "all"] = spec("pending (default), confirmed, rejected or "
                                                                      "all.", default="pending")
    limit: int = spec(default=50, low=1, high=MAX_LIMIT)


@shape
class ConfirmSkillProposal:
    """Register a pending proposal; `id` is in the path, and the body may be empty."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"version_of": "car-insurance"}]

    id: str = spec("A skill proposal id (sprop-…).")
    version_of: str | None = spec("The slug of a skill among the proposal's candidates: register the proposal as "
                                  "that skill's next version instead of under its own slug.", default=None)


@shape
class RejectSkillProposal:
    """Reject a pending proposal; `id` is in the path, and the body may be empty."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"reason": "The broker renews it for us."}]

    id: str = spec("A skill proposal id (sprop-…).")
    reason: str | None = spec("Why; secrets in it are redacted.", default=None, max_chars=MAX_STEP_CHARS)


def parse_propose_skill(data: object, credential: Credential, settings: Settings, text: bool = False) -> CheckedProposal:
    """Every field passes the secret gate: a secret in the slug or scope is refused, one in the text
    (title, triggers, steps, source trail) is redacted."""
    credential.require_writer()
    raw = parse_fields(ProposeSkill, data, text=text)
    if raw.slug is not None:
        refuse_secret("slug", raw.slug, InvalidField)
        unreserved(check_slug(raw.slug))
    scope = writable_scope(raw.scope, credential, settings)
    kinds: set[str] = set()

    def gated(values: list[str], name: str, most: int, chars: int) -> tuple[str, ...]:
        if not 1 <= len(values) <= most:
            raise InvalidField(f"{name} must hold 1 to {most} entries")
        out = []
        for i, value in enumerate(values):
            if not value.strip():
                raise InvalidField(f"{name}[{i}] must be non-empty text")
            if len(value) > chars:
                raise InvalidField(f"{name}[{i}] is longer than {chars} characters")
            gate = redact(value.strip())
            kinds.update(gate.kinds)
            out.append(gate.text)
        return tuple(out)

    (title,) = gated([raw.title], "title", 1, MAX_TITLE_CHARS)
    triggers = gated(raw.triggers, "triggers", MAX_TRIGGERS, MAX_TRIGGER_CHARS)
    steps = gated(raw.steps, "steps", MAX_STEPS, MAX_STEP_CHARS)
    trail = gated(raw.source_trail, "source_trail", MAX_TRAIL, MAX_TRAIL_CHARS)
    slug = raw.slug if raw.slug is not None else slug_of(title)
    return CheckedProposal(scope, slug, title, triggers, steps, trail, tuple(sorted(kinds)))


def slug_of(title: str) -> str:
    """A slug made of a title's letters and digits (accents dropped)."""
    plain = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:64].rstrip("-")
    if not slug:
        return "skill-" + hashlib.md5(title.encode()).hexdigest()[:8]
    return f"{slug[:58]}-skill" if slug in RESERVED_SLUGS else slug


def parse_confirm_skill_proposal(data: object, text: bool = False) -> ConfirmSkillProposal:
    command = parse_fields(ConfirmSkillProposal, data, text=text)
    _skill_proposal_id(command.id)
    if command.version_of is not None:
        check_slug(command.version_of)
    return command


def parse_reject_skill_proposal(data: object, text: bool = False) -> RejectSkillProposal:
    command = parse_fields(RejectSkillProposal, data, text=text)
    _skill_proposal_id(command.id)
    return command if command.reason is None else replace(command, reason=redact(command.reason.strip()).text)


def _skill_proposal_id(value: str) -> None:
    if not value.startswith("sprop-") or len(value) > 64:
        raise InvalidField("id must be a skill proposal id (sprop-...)")

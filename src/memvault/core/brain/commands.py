"""The input of each brain read, skill and housekeeping operation: its fields (the request's, on
every surface) and, where the fields alone do not say everything, its one parser. A parser takes
plain data — a JSON body, a query string's values (``text``), RPC or MCP arguments — and returns
the command or raises ``InvalidField`` naming the field. The write's input is in ``fact_input``."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from memvault.core.brain.fact_input import MAX_CONTENT_CHARS, SCOPE, FactIn
from memvault.core.brain.results import SearchMode
from memvault.core.brain.rows import EntryType
from memvault.core.brain.scopes import Credential, check_scope
from memvault.core.brain.wire import parse_fields, shape, spec
from memvault.core.errors import InvalidField, PayloadTooLarge
from memvault.core.redaction import redact, refuse_secret
from memvault.core.settings import Settings

MAX_QUERY_CHARS = 1000
MAX_LIMIT = 200
MAX_BUDGET = 100_000
MAX_REASON_CHARS = 2000
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# Slugs a new skill may not take: `GET /v1/brain/skills/proposals` lists skill proposals.
RESERVED_SLUGS = frozenset({"proposals"})
AS_OF = "Unix seconds or ISO 8601: read the brain as it was then."


@shape
class SearchFacts:
    """Find facts the credential may read: `keyword` (exact tokens count) or `hybrid` (keyword plus vectors)."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"query": "invoice INV-20931", "mode": "keyword", "limit": 5}]

    query: str = spec("The words to find.", nonblank=True, max_chars=MAX_QUERY_CHARS)
    mode: SearchMode = spec("keyword (default) or hybrid.", default="keyword")
    as_of: float | None = spec(AS_OF, default=None, time=True)
    entry_type: EntryType | None = spec("Only facts of this type.", default=None)
    limit: int | None = spec("Most results; the deployment's default without it.", default=None, low=1, high=MAX_LIMIT)


@shape
class Recall:
    """One envelope within a token budget: pinned core, recent facts, and what matches `query`."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"query": "when does the lease renew?", "budget": 2000}]

    query: str | None = spec("What to recall facts for; without it, core and recent only.", default=None,
                             max_chars=MAX_QUERY_CHARS)
    as_of: float | None = spec(AS_OF, default=None, time=True)
    budget: int | None = spec("Most tokens the envelope may hold.", default=None, low=1, high=MAX_BUDGET)


@shape
class FactRef:
    id: str = spec("A fact id (mem-…).")


@shape
class RetireFact:
    """Retire a fact by hand: superseded by nothing, kept for its history and `as_of` reads; writers only."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"id": "mem-0123456789abcdef", "reason": "The lease ended in March."}]

    id: str = spec("A fact id (mem-…).")
    reason: str = spec("Why the fact no longer holds; its history shows it. Secrets in it are redacted.",
                       nonblank=True, max_chars=MAX_REASON_CHARS)


@dataclass(frozen=True)
class CheckedRetirement:
    """A retirement once parsed: the fact's id checked, the reason through the secret gate."""

    id: str
    reason: str
    redacted: tuple[str, ...]


@shape
class ExportFacts:
    source_prefix: str | None = spec("Only facts whose source starts with this.", default=None)


@shape
class ListSkills:
    """Every current skill the credential may read (or every skill current at `as_of`)."""

    as_of: float | None = spec(AS_OF, default=None, time=True)


@shape
class GetSkill:
    slug: str
    scope: str | None = spec("The skill's scope, where one slug lives in several.", default=None)
    version: int | None = spec("An earlier version; the current one without it.", default=None, low=1)
    as_of: float | None = spec("Unix seconds or ISO 8601: the version that was current then.", default=None,
                               time=True)


@shape
class RegisterSkill:
    """A skill (a named procedure), or a new version of one; writer credentials only."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{
        "slug": "pay-invoice", "scope": "business", "name": "Pay an invoice",
        "content": "1. Check the invoice against the ledger.\n2. Pay by bank transfer.\n3. File the receipt.",
    }]

    slug: str = spec("1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit.")
    content: str = spec("The procedure; secrets in it are redacted.", nonblank=True)
    name: str | None = spec("Defaults to the slug.", default=None, max_chars=200)
    description: str | None = spec(default=None, max_chars=2000)
    scope: str | None = spec(SCOPE + " Optional for a credential of one scope.", default=None)


@dataclass(frozen=True)
class CheckedSkill:
    """A skill registration once parsed: every field gated, its scope the credential's to write."""

    slug: str
    scope: str
    name: str
    description: str
    content: str
    redacted: tuple[str, ...]


@shape
class Sync:
    """`push` writes `items` under `source` and retires what it no longer holds; `pull` returns what changed since `since`."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"direction": "pull", "source": "files:", "since": "2025-01-01T00:00:00Z"}]

    direction: Literal["push", "pull"]
    source: str = spec("The source prefix the sync covers, e.g. `files:`.", nonblank=True)
    since: float | None = spec("pull: changes after this moment (the last pull's `now`).", default=None, time=True)
    items: list[FactIn] | None = spec("push: the facts under `source`.", default=None)


@shape
class Consolidate:
    """Find duplicates, updates, merges and broken chains as proposals; a dry run unless `dry_run` is false."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"dry_run": True, "scopes": ["family"]}]

    dry_run: bool = spec("Default true: only report what a run would propose; false stores the proposals and "
                         "re-embeds changed facts.", default=True)
    scopes: list[str] | None = spec("Some of the credential's scopes; default all of them.", default=None)


@shape
class ListProposals:
    status: Literal["open", "accepted", "rejected", "stale", "all"] = spec("open (default), accepted, rejected, "
                                                                           "stale or all.", default="open")
    limit: int = spec(default=50, low=1, high=MAX_LIMIT)


@shape
class ProposalRef:
    id: str = spec("A proposal id (prop-…).")


def parse_fact_ref(data: object, text: bool = False) -> FactRef:
    ref = parse_fields(FactRef, data, text=text)
    if not ref.id.startswith("mem-") or len(ref.id) > 64:
        raise InvalidField("id must be a fact id (mem-...)")
    return ref


def parse_retire_fact(data: object, credential: Credential, _settings: Settings, text: bool = False) -> CheckedRetirement:
    credential.require_writer()
    raw = parse_fields(RetireFact, data, text=text)
    parse_fact_ref({"id": raw.id})
    gate = redact(raw.reason.strip())
    return CheckedRetirement(raw.id, gate.text, gate.kinds)


def parse_get_skill(data: object, text: bool = False) -> GetSkill:
    command = parse_fields(GetSkill, data, text=text)
    return replace(command, slug=check_slug(command.slug))


def check_slug(value: str) -> str:
    if not SLUG.match(value):
        raise InvalidField("slug must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
    return value


def unreserved(slug: str) -> str:
    """A new skill may not take a slug the skill paths use for themselves."""
    if slug in RESERVED_SLUGS:
        raise InvalidField(f"slug {slug!r} is reserved: /v1/brain/skills/{slug} is a path of its own")
    return slug


def parse_register_skill(data: object, credential: Credential, settings: Settings, text: bool = False) -> CheckedSkill:
    credential.require_writer()
    raw = parse_fields(RegisterSkill, data, text=text)
    return check_skill(replace(raw, slug=unreserved(raw.slug)), credential, settings)


def check_skill(raw: RegisterSkill, credential: Credential, settings: Settings) -> CheckedSkill:
    """Every field passes the secret gate: a secret in an identifier (slug, scope) is refused, one
    in the text (name, description, content) is redacted."""
    refuse_secret("slug", raw.slug, InvalidField)
    slug = check_slug(raw.slug)
    scope = writable_scope(raw.scope, credential, settings)
    if len(raw.content) > MAX_CONTENT_CHARS:
        raise PayloadTooLarge(f"content is longer than {MAX_CONTENT_CHARS} characters")
    name = slug if raw.name is None else raw.name
    gates = [redact(value.strip()) for value in (raw.content, name, raw.description or "")]
    content, name, description = (gate.text for gate in gates)
    return CheckedSkill(slug, scope, name, description, content, tuple(sorted({k for g in gates for k in g.kinds})))


def writable_scope(scope: str | None, credential: Credential, settings: Settings) -> str:
    """The scope a skill (or a proposal of one) is written to: given, or the credential's only one."""
    if scope is not None:
        refuse_secret("scope", scope, InvalidField)
    if scope is None and len(credential.scopes) == 1:
        scope = next(iter(credential.scopes))
    scope = check_scope(scope, settings)
    credential.require_scope(scope)
    return scope


def parse_sync(data: object, text: bool = False) -> Sync:
    command = parse_fields(Sync, data, text=text)
    if command.direction == "push" and command.items is None:
        raise InvalidField("items is required to push: a list of facts")
    return command


def parse_consolidate(data: object, text: bool = False) -> Consolidate:
    command = parse_fields(Consolidate, {} if data is None else data, text=text)
    if command.scopes is None:
        return command
    if not command.scopes:
        raise InvalidField("scopes must name at least one scope (or be left out for all of the credential's)")
    return replace(command, scopes=sorted(set(command.scopes)))


def parse_proposal_ref(data: object, text: bool = False) -> ProposalRef:
    ref = parse_fields(ProposalRef, data, text=text)
    if not ref.id.startswith("prop-") or len(ref.id) > 64:
        raise InvalidField("id must be a proposal id (prop-...)")
    return ref


"""The brain write's input and its one parser: one fact or a batch, each fact redacted, given its
deterministic id in its scope, and checked against the writer's scopes. Any problem is raised before the
first write, naming the field."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from memvault.core.brain.rows import EntryType
from memvault.core.brain.scopes import Credential, check_scope
from memvault.core.brain.wire import parse_fields, shape, spec
from memvault.core.errors import InvalidField, PayloadTooLarge
from memvault.core.ranking import normalize_text
from memvault.core.redaction import redact, refuse_secret
from memvault.core.settings import Settings

MAX_SOURCE_CHARS = 512
MAX_CONTENT_CHARS = 200_000
SCOPE = "One of the scopes this deployment walls facts by; the credential must hold it."


@shape
class FactIn:
    """One fact. In a batch, `source`, `scope` and `entry_type` default to the batch's."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{"content": "The cabin at Lake Orta has a green door.", "source": "notes:family",
                           "scope": "family", "valid_from": "2024-06-01T00:00:00Z"}]

    content: str | None = spec("The fact; secrets in it are redacted before storage.", default=None)
    fact: str | None = spec("Alias of content.", default=None)
    source: str | None = spec("Where the fact comes from, e.g. `files:notes/a.md`; `api` without it.", default=None)
    scope: str | None = spec(SCOPE + " Optional for a credential of one scope.", default=None)
    entry_type: EntryType | None = spec("`fact` without it.", default=None)
    source_tier: int | None = spec("0 is the most authoritative source; 2 without it.", default=None, low=0, high=9)
    confidence: float | None = spec("1 without it.", default=None, low=0.0, high=1.0)
    valid_from: float | None = spec("Unix seconds or ISO 8601; defaults to now.", default=None, time=True)
    pinned: bool | None = spec("Pinned facts form the recall core.", default=None)
    supersedes: str | None = spec("Id of the fact this one replaces.", default=None)
    importance: int | None = spec("1 (trivia) to 5 (essential); without it the brain's LLM rates it, or 3.",
                                  default=None, low=1, high=5)


@shape
class WriteFactsIn(FactIn):
    """One fact (the fields of FactIn) or a batch in `facts`, whose `source`, `scope` and
    `entry_type` are its facts' defaults. Idempotent per scope, source and text."""

    EXAMPLES: ClassVar[list[dict[str, Any]]] = [{
        "source": "notes:family", "scope": "family",
        "facts": [{"content": "Aunt Mildred's birthday is on 14 July.", "pinned": True},
                  {"content": "The cabin at Lake Orta has a green door.", "valid_from": "2024-06-01T00:00:00Z"}],
    }]

    facts: list[FactIn] | None = spec("A batch of facts instead of one.", default=None)
    reconcile: bool | None = spec("Retire current facts of the batch's sources it no longer holds.", default=None)
    source_prefix: str | None = spec("Reconcile everything under this source prefix.", default=None)
    bands: bool = spec("false skips the write-time bands (bulk imports).", default=True)


BATCH_ONLY = ("facts", "reconcile", "source_prefix")
ITEM_ONLY = tuple(f.name for f in dataclasses.fields(FactIn) if f.name not in ("source", "scope", "entry_type"))


@dataclass(frozen=True)
class FactInput:
    id: str
    content: str
    content_hash: str
    source: str
    scope: str
    entry_type: str
    source_tier: int
    confidence: float
    valid_from: float | None
    pinned: bool
    supersedes: str | None
    redacted: tuple[str, ...]
    # 1 (trivia) to 5 (essential); None leaves it to the brain's LLM, or 3.
    importance: int | None = None

    @property
    def norm_hash(self) -> str:
        return norm_hash(self.content)

    @property
    def legacy_id(self) -> str:
        return legacy_fact_id(self.source, self.content)

    def with_content(self, text: str) -> FactInput:
        """The same fact saying ``text`` instead (a merge's wording): gated, hashed and named anew."""
        gate = redact(text.strip())
        return dataclasses.replace(self, id=fact_id(self.scope, self.source, gate.text), content=gate.text,
                                   content_hash=content_hash(gate.text),
                                   redacted=tuple(sorted({*self.redacted, *gate.kinds})))


@dataclass(frozen=True)
class WriteFacts:
    """A write once parsed: every fact gated, named and within the writer's scopes."""

    items: tuple[FactInput, ...]
    reconcile: bool
    source_prefix: str | None
    # Without a prefix, reconcile covers exactly these sources: the batch's own and its default.
    sources: tuple[str, ...] = ()
    bands: bool = True


def fact_id(scope: str, source: str, content: str) -> str:
    """Deterministic, so re-sending the same fact from the same source to the same scope is a
    no-op; the scope is part of it, so no write ever meets a row of another scope under its id.
    Hashed unlike ``legacy_fact_id`` so that no chosen source and text give a legacy row's id."""
    key = json.dumps([scope, source, content], ensure_ascii=False)
    return "mem-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def legacy_fact_id(source: str, content: str) -> str:
    """The id facts stored before ids named their scope still carry (clients, links, vectors and
    receipts hold it): a write finds such a row by it, only within the fact's own scope."""
    return "mem-" + hashlib.md5(f"{source}|{content}".encode()).hexdigest()[:16]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def norm_hash(text: str) -> str:
    """Equal for two texts that differ only in case, spacing or punctuation."""
    return content_hash(normalize_text(text))


def _scope(scope: str | None, credential: Credential, settings: Settings, where: str) -> str:
    if scope is None:
        if len(credential.scopes) != 1:
            raise InvalidField(f"{where}scope is required: this credential may write to more than one scope")
        return next(iter(credential.scopes))
    scope = check_scope(scope, settings)
    credential.require_scope(scope)
    return scope


def _source(value: str, where: str) -> str:
    if not value.strip():
        raise InvalidField(f"{where}source must be non-empty text")
    if len(value) > MAX_SOURCE_CHARS:
        raise PayloadTooLarge(f"{where}source is longer than {MAX_SOURCE_CHARS} characters")
    refuse_secret("source", value, InvalidField)
    return value.strip()


def check_item(raw: FactIn, defaults: FactIn, credential: Credential, settings: Settings, where: str = "") -> FactInput:
    """One fact of a write, its absent fields taken from ``defaults`` (the batch's)."""
    if raw.content is not None and raw.fact is not None:
        raise InvalidField(f"{where}content and {where}fact: give one of them, not both")
    name, text = ("fact", raw.fact) if raw.fact is not None else ("content", raw.content)
    if text is None or not text.strip():
        raise InvalidField(f"{where}{name} must be non-empty text")
    if len(text) > MAX_CONTENT_CHARS:
        raise PayloadTooLarge(f"{where}{name} is longer than {MAX_CONTENT_CHARS} characters")
    if raw.supersedes is not None and not raw.supersedes.startswith("mem-"):
        raise InvalidField(f"{where}supersedes must be the id of a fact (mem-...)")
    gate = redact(text.strip())
    source = _source(raw.source if raw.source is not None else defaults.source or "api", where)
    scope = _scope(raw.scope if raw.scope is not None else defaults.scope, credential, settings, where)
    return FactInput(
        id=fact_id(scope, source, gate.text),
        content=gate.text,
        content_hash=content_hash(gate.text),
        source=source,
        scope=scope,
        entry_type=str(raw.entry_type or defaults.entry_type or "fact"),
        source_tier=2 if raw.source_tier is None else raw.source_tier,
        confidence=1.0 if raw.confidence is None else raw.confidence,
        valid_from=raw.valid_from,
        pinned=bool(raw.pinned),
        supersedes=raw.supersedes,
        redacted=gate.kinds,
        importance=raw.importance,
    )


def parse_write(data: object, credential: Credential, settings: Settings, text: bool = False) -> WriteFacts:
    """One fact (the data itself) or a batch (``facts``), with optional source-scoped reconcile."""
    credential.require_writer()
    raw = parse_fields(WriteFactsIn, data, text=text)
    given = sorted(name for name, value in cast("Mapping[str, Any]", data).items() if value is not None)
    if raw.facts is None:
        stray = [name for name in given if name in BATCH_ONLY]
        if stray:
            raise InvalidField(f"{', '.join(stray)}: only a batch (facts) takes these")
        item = check_item(raw, FactIn(), credential, settings)
        return WriteFacts(items=(item,), reconcile=False, source_prefix=None, sources=(item.source,), bands=raw.bands)
    stray = [name for name in given if name in ITEM_ONLY]
    if stray:
        raise InvalidField(f"{', '.join(stray)}: each fact of a batch takes these, not the batch")
    return check_batch(raw, credential, settings, "facts")


def check_batch(raw: WriteFactsIn, credential: Credential, settings: Settings, name: str) -> WriteFacts:
    """A batch of facts (named ``name`` in the input) with its defaults and reconcile."""
    credential.require_writer()
    facts, prefix = raw.facts or [], raw.source_prefix
    if len(facts) > settings.brain_max_batch:
        raise PayloadTooLarge(f"{name} holds at most {settings.brain_max_batch} facts")
    if prefix is not None and not prefix.strip():
        raise InvalidField("source_prefix must be non-empty text")
    defaults = FactIn(source=raw.source if raw.source is not None else prefix, scope=raw.scope,
                      entry_type=raw.entry_type)
    items: dict[str, FactInput] = {}
    for index, fact in enumerate(facts):
        item = check_item(fact, defaults, credential, settings, f"{name}[{index}].")
        items.setdefault(item.id, item)
    if prefix is not None and any(not item.source.startswith(prefix) for item in items.values()):
        raise InvalidField(f"every fact's source must start with source_prefix ({name})")
    sources = {item.source for item in items.values()}
    if raw.source is not None and raw.source.strip():
        sources.add(raw.source.strip())
    if raw.reconcile and prefix is None and not sources:
        raise InvalidField("reconcile of an empty batch needs source or source_prefix, so it knows what to retire")
    return WriteFacts(items=tuple(items.values()), reconcile=bool(raw.reconcile), source_prefix=prefix,
                      sources=tuple(sorted(sources)), bands=raw.bands)

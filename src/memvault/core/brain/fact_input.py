"""Parsing and checking a brain write before anything is stored: one fact or a batch, each fact
redacted, given its deterministic id, and checked against the writer's scopes. Any problem is an
``InvalidInput`` raised before the first write."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.rows import ENTRY_TYPES
from memvault.core.brain.scopes import Credential, check_scope
from memvault.core.errors import InvalidInput, PayloadTooLarge
from memvault.core.ranking import normalize_text
from memvault.core.redaction import redact, refuse_secret
from memvault.core.settings import Settings
from memvault.core.times import parse_time

ITEM_FIELDS = frozenset({
    "content", "fact", "source", "scope", "entry_type", "source_tier", "confidence", "valid_from", "pinned", "supersedes",
    "importance",
})
BATCH_FIELDS = frozenset({"facts", "reconcile", "source_prefix", "source", "scope", "entry_type"})
MAX_SOURCE_CHARS = 512
MAX_CONTENT_CHARS = 200_000


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

    def with_content(self, text: str) -> FactInput:
        """The same fact saying ``text`` instead (a merge's wording): gated, hashed and named anew."""
        gate = redact(text.strip())
        return dataclasses.replace(self, id=fact_id(self.source, gate.text), content=gate.text,
                                   content_hash=content_hash(gate.text),
                                   redacted=tuple(sorted({*self.redacted, *gate.kinds})))


@dataclass(frozen=True)
class WriteRequest:
    items: tuple[FactInput, ...]
    reconcile: bool
    source_prefix: str | None
    # Without a prefix, reconcile covers exactly these sources: the batch's own and its default.
    sources: tuple[str, ...] = ()


def fact_id(source: str, content: str) -> str:
    """Deterministic, so re-sending the same fact from the same source is a no-op."""
    return "mem-" + hashlib.md5(f"{source}|{content}".encode()).hexdigest()[:16]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def norm_hash(text: str) -> str:
    """Equal for two texts that differ only in case, spacing or punctuation."""
    return content_hash(normalize_text(text))


def _text(raw: Mapping[str, Any], name: str, default: str | None, limit: int) -> str:
    value = raw.get(name, default)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be a non-empty string")
    if len(value) > limit:
        raise PayloadTooLarge(f"{name} is longer than {limit} characters")
    return value.strip()


def _number(raw: Mapping[str, Any], name: str, default: float, low: float, high: float) -> float:
    value = raw.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput(f"{name} must be a number")
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low:g} and {high:g}")
    return float(value)


def _scope(raw: Mapping[str, Any], defaults: Mapping[str, Any], credential: Credential, settings: Settings) -> str:
    scope = raw.get("scope", defaults.get("scope"))
    if scope is None:
        if len(credential.scopes) != 1:
            raise InvalidInput("scope is required: this credential may write to more than one scope")
        return next(iter(credential.scopes))
    scope = check_scope(scope, settings)
    credential.require_scope(scope)
    return scope


def parse_item(raw: Any, defaults: Mapping[str, Any], credential: Credential, settings: Settings) -> FactInput:
    if not isinstance(raw, Mapping):
        raise InvalidInput("each fact must be an object")
    unknown = set(raw) - ITEM_FIELDS
    if unknown:
        raise InvalidInput(f"unknown fact fields: {', '.join(sorted(unknown))}")
    if "content" in raw and "fact" in raw:
        raise InvalidInput("give either content or fact, not both")
    content_field = "fact" if "fact" in raw else "content"
    gate = redact(_text(raw, content_field, None, MAX_CONTENT_CHARS))
    source = _text(raw, "source", defaults.get("source", "api"), MAX_SOURCE_CHARS)
    refuse_secret("source", source)
    entry_type = raw.get("entry_type", defaults.get("entry_type", "fact"))
    if entry_type not in ENTRY_TYPES:
        raise InvalidInput(f"entry_type must be one of {', '.join(ENTRY_TYPES)}")
    tier = raw.get("source_tier", 2)
    if isinstance(tier, bool) or not isinstance(tier, int) or not 0 <= tier <= 9:
        raise InvalidInput("source_tier must be an integer from 0 (most authoritative) to 9")
    pinned = raw.get("pinned", False)
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be true or false")
    importance = raw.get("importance")
    if importance is not None and (isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 5):
        raise InvalidInput("importance must be an integer from 1 (trivia) to 5 (essential)")
    supersedes = raw.get("supersedes")
    if supersedes is not None and (not isinstance(supersedes, str) or not supersedes.startswith("mem-")):
        raise InvalidInput("supersedes must be the id of a fact (mem-...)")
    return FactInput(
        id=fact_id(source, gate.text),
        content=gate.text,
        content_hash=content_hash(gate.text),
        source=source,
        scope=_scope(raw, defaults, credential, settings),
        entry_type=str(entry_type),
        source_tier=tier,
        confidence=_number(raw, "confidence", 1.0, 0.0, 1.0),
        valid_from=parse_time(raw.get("valid_from"), "valid_from"),
        pinned=pinned,
        supersedes=supersedes,
        redacted=gate.kinds,
        importance=importance,
    )


def parse_write(payload: Any, credential: Credential, settings: Settings) -> WriteRequest:
    """One fact (the payload itself) or a batch (``facts``), with optional source-scoped reconcile."""
    credential.require_writer()
    if not isinstance(payload, Mapping):
        raise InvalidInput("the body must be a JSON object")
    if "facts" not in payload:
        item = parse_item(payload, {}, credential, settings)
        return WriteRequest(items=(item,), reconcile=False, source_prefix=None, sources=(item.source,))
    unknown = set(payload) - BATCH_FIELDS
    if unknown:
        raise InvalidInput(f"unknown batch fields: {', '.join(sorted(unknown))}")
    facts, reconcile, prefix = payload["facts"], payload.get("reconcile", False), payload.get("source_prefix")
    if not isinstance(facts, list):
        raise InvalidInput("facts must be a list")
    if len(facts) > settings.brain_max_batch:
        raise PayloadTooLarge(f"a batch holds at most {settings.brain_max_batch} facts")
    if not isinstance(reconcile, bool):
        raise InvalidInput("reconcile must be true or false")
    if prefix is not None and (not isinstance(prefix, str) or not prefix.strip()):
        raise InvalidInput("source_prefix must be a non-empty string")
    defaults = {k: payload[k] for k in ("source", "scope", "entry_type") if k in payload}
    if prefix is not None and "source" not in defaults:
        defaults["source"] = prefix
    items: dict[str, FactInput] = {}
    for raw in facts:
        item = parse_item(raw, defaults, credential, settings)
        items.setdefault(item.id, item)
    if prefix is not None and any(not item.source.startswith(prefix) for item in items.values()):
        raise InvalidInput("every fact's source must start with source_prefix")
    sources = {item.source for item in items.values()}
    if isinstance(payload.get("source"), str) and payload["source"].strip():
        sources.add(payload["source"].strip())
    if reconcile and prefix is None and not sources:
        raise InvalidInput("reconcile of an empty batch needs source or source_prefix, so it knows what to retire")
    return WriteRequest(items=tuple(items.values()), reconcile=reconcile, source_prefix=prefix, sources=tuple(sorted(sources)))

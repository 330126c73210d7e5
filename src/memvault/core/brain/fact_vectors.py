"""The brain's vectors: one for a fact's hook and one for each passage of a long fact's full text,
every id recorded in the database (the fact's own id, ``<fact id>:<n>`` for passages) so none is
ever orphaned. A superseded or retired fact's vectors leave the index only once its successor's
are stored, so the index never holds neither."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from memvault.core.brain.freshness import bumps
from memvault.core.brain.rows import blob_key_of
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.passages import passages
from memvault.core.retry import is_transient_storage, retry
from memvault.core.sql import in_batches, placeholders

log = logging.getLogger(__name__)
# Repeated between consecutive passages, so a statement cut by a boundary is whole in one of them.
PASSAGE_OVERLAP_CHARS = 120
# Texts per embedding call and per upsert.
EMBED_GROUP = 64
Statement = tuple[str, Sequence[Any]]


@dataclass(frozen=True)
class FactText:
    """What a fact's vectors are made of: its hook, and its scope and type as vector metadata."""

    id: str
    hook: str
    scope: str
    entry_type: str


def passage_id(fact_id: str, ordinal: int) -> str:
    return f"{fact_id}:{ordinal}"


def parent_of(vector_id: str) -> str:
    return vector_id.split(":", 1)[0]


def passage_statements(fact_id: str, full_text: str, hook_chars: int) -> list[Statement]:
    """A long fact's passages, written in the same batch as the fact (a short fact has none: its
    hook is all of it)."""
    if len(full_text) <= hook_chars:
        return []
    return [
        ("INSERT OR IGNORE INTO fact_passages (id, fact_id, ordinal, text) VALUES (?, ?, ?, ?)",
         (passage_id(fact_id, n), fact_id, n, text))
        for n, text in enumerate(passages(full_text, hook_chars, PASSAGE_OVERLAP_CHARS))
    ]


async def passages_of(deps: Deps, fact_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for group in in_batches(list(fact_ids)):
        for row in await deps.db.query(
            f"SELECT id, fact_id, text FROM fact_passages WHERE fact_id IN ({placeholders(len(group))}) "
            "ORDER BY fact_id, ordinal", list(group)):
            found.setdefault(row["fact_id"], []).append((row["id"], row["text"]))
    return found


async def embed_facts(deps: Deps, facts: Sequence[FactText], known: Mapping[str, Sequence[float]] | None = None,
                      replaced: bool = False) -> str:
    """Embed the facts' hooks and passages into the vector index (``known`` holds hook vectors
    already computed, by the write-time bands), record them, then, when the write ``replaced``
    facts, retire those facts' vectors."""
    if not facts:
        return "none"
    known = known or {}
    try:
        deep = await passages_of(deps, [fact.id for fact in facts])
        items: list[tuple[str, str, dict[str, Any], str]] = []
        for fact in facts:
            meta = {"scope": fact.scope, "entry_type": fact.entry_type}
            items.append((fact.id, fact.hook, meta, fact.id))
            items += [(pid, text, {**meta, "fact": fact.id}, fact.id) for pid, text in deep.get(fact.id, [])]
        for start in range(0, len(items), EMBED_GROUP):
            await _embed_group(deps, items[start : start + EMBED_GROUP], known)
        await _mark_embedded(deps, [fact.id for fact in facts], {fact.scope for fact in facts})
    except Exception as exc:  # the write has landed; the nightly re-embed picks these rows up
        log.warning("brain embedding deferred for %d facts: %s", len(facts), type(exc).__name__)
        return "deferred"
    if replaced:
        await retire_vectors(deps)
    return "done"


async def _embed_group(deps: Deps, group: Sequence[tuple[str, str, dict[str, Any], str]],
                       known: Mapping[str, Sequence[float]]) -> None:
    missing = [(vid, text) for vid, text, _, _ in group if vid not in known]
    fresh = dict(zip([vid for vid, _ in missing], await deps.embedder.embed([t for _, t in missing]), strict=True)) \
        if missing else {}
    await deps.vectors.upsert([(vid, known.get(vid) or fresh[vid], meta) for vid, _, meta, _ in group])


async def _mark_embedded(deps: Deps, fact_ids: Sequence[str], scopes: set[str]) -> None:
    now = deps.clock()
    statements: list[Statement] = []
    for group in in_batches(list(fact_ids), 90):
        marks = placeholders(len(group))
        statements.append((f"UPDATE memory SET embed_id = id, embedded_at = ?, vectors_retired_at = NULL "
                           f"WHERE id IN ({marks})", [now, *group]))
        statements.append((f"UPDATE fact_passages SET embedded_at = ? WHERE fact_id IN ({marks})", [now, *group]))
    statements += bumps(scopes)  # hybrid answers change with the vectors
    await retry(partial(deps.db.batch, statements), is_transient_storage)


async def retire_vectors(deps: Deps, limit: int = 200) -> int:
    """Delete the vectors of superseded or retired facts whose successor (if any) has its own
    stored; the fact rows stay (history, ``as_of`` keyword search), only their vectors go."""
    rows = await deps.db.query(
        "SELECT m.id, m.scope FROM memory m LEFT JOIN memory s ON s.id = m.superseded_by "
        "WHERE m.superseded_at IS NOT NULL AND m.vectors_retired_at IS NULL "
        "AND (s.id IS NULL OR s.embedded_at IS NOT NULL) LIMIT ?", [limit])
    fact_ids = [row["id"] for row in rows]
    if not fact_ids:
        return 0
    try:
        deep = await passages_of(deps, fact_ids)
        await deps.vectors.delete([*fact_ids, *(pid for found in deep.values() for pid, _ in found)])
        now = deps.clock()
        statements: list[Statement] = []
        for group in in_batches(fact_ids, 90):
            marks = placeholders(len(group))
            statements.append((f"UPDATE memory SET vectors_retired_at = ?, embed_id = NULL WHERE id IN ({marks})",
                               [now, *group]))
            statements.append((f"UPDATE fact_passages SET embedded_at = NULL WHERE fact_id IN ({marks})", list(group)))
        statements += bumps(row["scope"] for row in rows)
        await retry(partial(deps.db.batch, statements), is_transient_storage)
    except Exception as exc:  # deleting is idempotent: the next write or the nightly run tries again
        log.warning("retiring %d facts' vectors deferred: %s", len(fact_ids), type(exc).__name__)
        return 0
    return len(fact_ids)


async def full_text(deps: Deps, row: Mapping[str, Any]) -> str | None:
    """A fact's whole text: the row's content, or its body from the blob store (None if missing)."""
    if not row["body_uri"]:
        return str(row["content"])
    data = await deps.blobs.get(blob_key_of(row["body_uri"]))
    return None if data is None else data.decode("utf-8")


async def embed_pending(deps: Deps, credential: Credential, limit: int) -> int:
    """For the nightly cron: embed current rows never embedded or changed since (passages that a
    migration or a lost write left out are cut again first), then retire replaced vectors."""
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT id, content, scope, entry_type, body_uri FROM memory WHERE {wall} AND superseded_at IS NULL "
        "AND (embedded_at IS NULL OR embedded_at < updated_at) ORDER BY updated_at LIMIT ?", [*params, limit])
    deep = await passages_of(deps, [r["id"] for r in rows])
    statements: list[Statement] = []
    for row in rows:
        if row["body_uri"] and row["id"] not in deep:
            text = await full_text(deps, row)
            if text is not None:
                statements += passage_statements(row["id"], text, deps.tuning.brain_hook_chars)
    if statements:
        await deps.db.batch(statements)
    await embed_facts(deps, [FactText(r["id"], r["content"], r["scope"], r["entry_type"]) for r in rows])
    await retire_vectors(deps)
    return len(rows)

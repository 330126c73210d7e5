"""Brain search. Keyword is the floor: FTS5 over exact tokens, an exact-phrase bonus, recency as
the tie-break. Hybrid adds vector recall beside it (never instead of it), fused by reciprocal
rank; vector hits are walled by scope metadata and then re-read through the same SQL wall."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from memvault.core.brain.rows import FACT_COLUMNS, fact_out, parse_entry_type, parse_limit, visible
from memvault.core.brain.scopes import Credential
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.ranking import fts_match_expression, reciprocal_rank_fusion
from memvault.core.sql import in_batches, placeholders
from memvault.core.times import parse_time

MODES = ("keyword", "hybrid")
MAX_QUERY_CHARS = 1000
_WORDS = re.compile(r"\w+", re.UNICODE)
Row = dict[str, Any]


def _normalized(text: str) -> str:
    return " ".join(_WORDS.findall(text.casefold()))


def phrase_hit(query: str, content: str) -> bool:
    """The query's words appear together, in order, as whole words."""
    phrase = _normalized(query)
    return " " in phrase and f" {phrase} " in f" {_normalized(content)} "


def _filters(credential: Credential, as_of: float | None, entry_type: str | None) -> tuple[str, list[Any]]:
    where, params = visible(credential, as_of, "m")
    if entry_type is not None:
        where, params = f"{where} AND m.entry_type = ?", [*params, entry_type]
    return where, params


async def keyword_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    match = fts_match_expression(query)
    if match is None:
        return []
    where, params = _filters(credential, as_of, entry_type)
    columns = ", ".join(f"m.{c.strip()}" for c in FACT_COLUMNS.split(","))
    rows = await deps.db.query(
        f"SELECT {columns}, bm25(memory_fts) AS bm FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid "
        f"WHERE memory_fts MATCH ? AND {where} ORDER BY bm LIMIT ?",
        [match, *params, min(max(limit * 5, 50), 500)],
    )
    scored = []
    for row in rows:
        relevance = -float(row.pop("bm"))
        # A whole-phrase match outranks any scattered one; bm25 orders the rest.
        scored.append((row, relevance + (1000.0 if phrase_hit(query, row["content"]) else 0.0)))
    scored.sort(key=lambda item: (-round(item[1], 9), -float(item[0]["updated_at"]), item[0]["id"]))
    return scored[:limit]


async def rows_by_id(deps: Deps, credential: Credential, ids: Sequence[str], as_of: float | None = None,
                     entry_type: str | None = None) -> dict[str, Row]:
    where, params = _filters(credential, as_of, entry_type)
    found: dict[str, Row] = {}
    for group in in_batches(list(ids)):
        sql = f"SELECT {FACT_COLUMNS} FROM memory m WHERE {where} AND m.id IN ({placeholders(len(group))})"
        for row in await deps.db.query(sql, [*params, *group]):
            found[row["id"]] = row
    return found


async def vector_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    [vector] = await deps.embedder.embed([query])
    metadata_filter: dict[str, Any] = {"scope": {"$in": credential.ordered_scopes}}
    if entry_type is not None:
        metadata_filter["entry_type"] = {"$eq": entry_type}
    # Superseded rows keep their vectors (for as_of), so ask for more than needed.
    matches = await deps.vectors.query(vector, top_k=min(limit * 3, 100), metadata_filter=metadata_filter)
    rows = await rows_by_id(deps, credential, [m.id for m in matches], as_of, entry_type)
    return [(rows[m.id], m.score) for m in matches if m.id in rows][:limit]


async def hybrid_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    keyword = await keyword_search(deps, credential, query, limit * 2, as_of, entry_type)
    vector = await vector_search(deps, credential, query, limit * 2, as_of, entry_type)
    rows = {row["id"]: row for row, _ in [*keyword, *vector]}
    fused = reciprocal_rank_fusion([[r["id"] for r, _ in keyword], [r["id"] for r, _ in vector]])
    return [(rows[row_id], score) for row_id, score in fused if row_id in rows][:limit]


async def search_brain(
    deps: Deps, credential: Credential, q: Any, mode: Any = "keyword", as_of: Any = None, entry_type: Any = None,
    limit: Any = None,
) -> dict[str, Any]:
    """``GET /memory/search`` and its RPC twin: checked input, walled rows, one JSON shape."""
    if not isinstance(q, str) or not q.strip():
        raise InvalidInput("q must be a non-empty query")
    if len(q) > MAX_QUERY_CHARS:
        raise InvalidInput(f"q is longer than {MAX_QUERY_CHARS} characters")
    mode = mode or "keyword"
    if mode not in MODES:
        raise InvalidInput("mode must be keyword or hybrid")
    when = parse_time(as_of, "as_of")
    kind = parse_entry_type(entry_type)
    count = parse_limit(limit, deps.settings.search_limit)
    run = keyword_search if mode == "keyword" else hybrid_search
    found = await run(deps, credential, q, count, when, kind)
    return {
        "mode": mode,
        "as_of": when,
        "results": [fact_out(row, score=round(score, 6)) for row, score in found],
    }

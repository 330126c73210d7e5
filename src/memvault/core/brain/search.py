"""Brain search. Keyword is the floor: BM25 over exact tokens, an exact-phrase bonus, recency as
the tie-break. Hybrid adds vector recall beside it (never instead of it), fused by reciprocal
rank; vector hits are walled by scope metadata and then re-read through the same SQL wall.

The FTS5 index is shared by every scope, so FTS5's own ``bm25()`` (whose document counts and
average length cover the whole index) would let a reader estimate how many walled rows hold a
term by watching scores. Keyword scores here are BM25 computed from the caller's visible rows
alone: FTS5 finds the rows holding each term, ``highlight()`` counts the term's occurrences in a
row, and document frequency, row count and average length are taken inside the wall. Nothing
that ranks or selects a row depends on a row the caller cannot read."""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.freshness import cached_read
from memvault.core.brain.rows import (
    FACT_COLUMNS,
    fact_out,
    parse_entry_type,
    parse_limit,
    readable_links,
    visible,
)
from memvault.core.brain.scopes import Credential
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.ranking import query_terms, reciprocal_rank_fusion
from memvault.core.sql import in_batches, placeholders
from memvault.core.times import parse_time

log = logging.getLogger("memvault.brain")

MODES = ("keyword", "hybrid")
MAX_QUERY_CHARS = 1000
# Terms scored per query: the rarest among the reader's rows, so a long query keeps its signal.
MAX_SCORED_TERMS = 40
# BM25's usual constants (FTS5 uses the same).
K1, B = 1.2, 0.75
PHRASE_BONUS = 1000.0
# D1 binds at most 100 parameters per statement.
MAX_PARAMS = 100
_WORDS = re.compile(r"\w+", re.UNICODE)
# The visible rows FTS5 finds for one term; CROSS JOIN keeps FTS5 the outer loop, so a rare term
# stays cheap, and every row it finds passes the wall before it counts.
_MATCHED = "memory_fts CROSS JOIN memory m ON m.seq = memory_fts.rowid WHERE memory_fts MATCH"
Row = dict[str, Any]


def search_terms(query: str) -> list[str]:
    """The query's distinct searchable tokens: stopwords dropped, punctuation split off."""
    words = (word for term in query_terms(query) for word in re.sub(r"[^\w]", " ", term).split())
    return list(dict.fromkeys(words))


def phrase_of(query: str) -> str | None:
    """The whole query as one FTS5 phrase (stopwords kept), when it has two words or more."""
    words = _WORDS.findall(query.casefold())
    return f'"{" ".join(words)}"' if len(words) > 1 else None


def _filters(credential: Credential, as_of: float | None, entry_type: str | None) -> tuple[str, list[Any]]:
    where, params = visible(credential, as_of, "m")
    if entry_type is not None:
        where, params = f"{where} AND m.entry_type = ?", [*params, entry_type]
    return where, params


class _Bound:
    """Numbered parameters (?1, ?2, ...): the wall is bound once and every part of a statement
    reuses it, so a statement of many parts stays within D1's limit."""

    def __init__(self, where: str, params: Sequence[Any]) -> None:
        self.params: list[Any] = []
        first, *rest = where.split("?")
        self.where = first + "".join(self.add(value) + piece for value, piece in zip(params, rest, strict=True))

    def add(self, value: Any) -> str:
        self.params.append(value)
        return f"?{len(self.params)}"


def _quoted(term: str) -> str:
    # Terms are runs of word characters, so quoting them makes one FTS5 string, never syntax.
    return f'"{term}"'


@dataclass(frozen=True)
class _Stats:
    rows: int
    total_length: int
    document_frequency: dict[str, int]


async def _stats(deps: Deps, terms: Sequence[str], where: str, params: list[Any]) -> _Stats:
    """Row count, total length and each term's document frequency, over the visible rows only."""
    rows, total, frequency = 0, 0, {}
    batch = MAX_PARAMS - len(params)
    for start in range(0, len(terms), batch):
        bound = _Bound(where, params)
        group = terms[start : start + batch]
        values = ", ".join(f"({i}, {bound.add(_quoted(term))})" for i, term in enumerate(group))
        sql = (f"WITH terms(i, q) AS (VALUES {values}) "
               f"SELECT -1 AS t, COUNT(*) AS n, SUM(m.content_chars) AS len FROM memory m WHERE {bound.where} "
               f"UNION ALL SELECT t.i, (SELECT COUNT(*) FROM {_MATCHED} t.q AND {bound.where}), NULL FROM terms t")
        for row in await deps.db.query(sql, bound.params):
            part = int(row["t"])
            if part < 0:
                rows, total = int(row["n"]), int(row["len"] or 0)
            else:
                frequency[group[part]] = int(row["n"])
    return _Stats(rows, total, frequency)


def _weights(stats: _Stats) -> dict[str, float]:
    """idf x (k1 + 1) of the rarest terms present; idf kept positive, as Lucene does, so a
    small brain still ranks."""
    present = sorted((df, index, term) for index, (term, df) in enumerate(stats.document_frequency.items()) if df)
    return {term: (K1 + 1.0) * math.log(1.0 + (stats.rows - df + 0.5) / (df + 0.5))
            for df, _, term in present[:MAX_SCORED_TERMS]}


async def keyword_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    """BM25 with statistics of the reader's visible rows. Each term (and the whole phrase) is one
    row of a VALUES table that FTS5 is asked about in turn, so the scoring is one statement (D1
    refuses a compound SELECT of more than five parts; a VALUES table is not one); a term's
    occurrences in a row are the spans ``highlight()`` marks."""
    where, params = _filters(credential, as_of, entry_type)
    terms = search_terms(query)
    stats = await _stats(deps, terms, where, params) if terms else _Stats(0, 0, {})
    weights = _weights(stats)
    if not weights:
        return []
    bound = _Bound(where, params)
    values = [f"({bound.add(weight)}, {bound.add(_quoted(term))}, 0)" for term, weight in weights.items()]
    phrase = phrase_of(query)
    if phrase is not None:
        values.append(f"(0, {bound.add(phrase)}, 1)")
    average = max(stats.total_length / max(stats.rows, 1), 1.0)
    norm = f"{bound.add(K1 * (1.0 - B))} + {bound.add(K1 * B / average)} * len"
    # The phrase row only marks a match, so it skips highlight().
    occurrences = "CASE t.p WHEN 1 THEN 0 ELSE max(1, length(highlight(memory_fts, 0, char(1), '')) - length(m.content)) END"
    columns = ", ".join(f"m.{c.strip()}" for c in FACT_COLUMNS.split(","))
    # Materialized, so highlight() runs inside the FTS5 query that matched; only the top rows are
    # read whole. A whole-phrase match outranks any scattered one; BM25 orders the rest and
    # recency breaks ties.
    sql = (f"WITH terms(w, q, p) AS (VALUES {', '.join(values)}), "
           f"hits AS MATERIALIZED (SELECT t.w AS w, t.p AS p, {occurrences} AS n, m.seq AS seq, "
           f"m.content_chars AS len, m.updated_at AS at, m.id AS id FROM terms t CROSS JOIN {_MATCHED} t.q "
           f"AND {bound.where}), "
           f"r AS (SELECT seq, at, id, MAX(p) AS phrase, round(SUM(w * n / (n + {norm})), 9) AS bm FROM hits "
           f"GROUP BY seq ORDER BY phrase DESC, bm DESC, at DESC, id LIMIT {bound.add(limit)}) "
           f"SELECT {columns}, r.phrase, r.bm FROM r CROSS JOIN memory m ON m.seq = r.seq "
           "ORDER BY r.phrase DESC, r.bm DESC, r.at DESC, r.id")
    found = []
    for hit in await deps.db.query(sql, bound.params):
        bonus = PHRASE_BONUS if hit.pop("phrase") else 0.0
        found.append((hit, float(hit.pop("bm")) + bonus))
    return found


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
    vector = await deps.query_vectors.vector(deps.embedder, query)
    metadata_filter: dict[str, Any] = {"scope": {"$in": credential.ordered_scopes}}
    if entry_type is not None:
        metadata_filter["entry_type"] = {"$eq": entry_type}
    # Superseded rows keep their vectors (for as_of), so ask for more than needed. A cosine score
    # belongs to one row and the scope filter is part of the query, so no walled row is ranked.
    matches = await deps.vectors.query(vector, top_k=min(limit * 3, 100), metadata_filter=metadata_filter)
    rows = await rows_by_id(deps, credential, [m.id for m in matches], as_of, entry_type)
    return [(rows[m.id], m.score) for m in matches if m.id in rows][:limit]


@dataclass(frozen=True)
class Hits:
    found: list[tuple[Row, float]]
    degraded: tuple[str, ...] = ()  # channels that failed, so the answer came without them


async def hybrid_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> Hits:
    """Keyword and vector channels fused by rank. The keyword channel is the floor: when the
    embedder or the vector index fails or times out, its results alone are the answer, marked
    degraded."""
    keyword = await keyword_search(deps, credential, query, limit * 2, as_of, entry_type)
    try:
        vector = await asyncio.wait_for(
            vector_search(deps, credential, query, limit * 2, as_of, entry_type),
            deps.settings.race_timeout_ms / 1000.0,
        )
    except Exception as exc:  # the floor answers; the failure is reported, never raised
        log.warning("brain vector channel failed, answering from keywords: %s", type(exc).__name__)
        return Hits(keyword[:limit], ("vector",))
    rows = {row["id"]: row for row, _ in [*keyword, *vector]}
    # Both lists hold re-checked rows only, so a rank here is a rank among readable rows.
    fused = reciprocal_rank_fusion([[r["id"] for r, _ in keyword], [r["id"] for r, _ in vector]])
    return Hits([(rows[row_id], score) for row_id, score in fused if row_id in rows][:limit])


async def search_brain(
    deps: Deps, credential: Credential, q: Any, mode: Any = "keyword", as_of: Any = None, entry_type: Any = None,
    limit: Any = None,
) -> dict[str, Any]:
    """``GET /memory/search`` and its RPC twin: checked input, walled rows, one JSON shape; a
    repeated search comes from the read cache until a readable scope is written."""
    return await cached_read(deps, credential, "brain-search", [q, mode, as_of, entry_type, limit],
                             lambda: _search(deps, credential, q, mode, as_of, entry_type, limit))


async def _search(deps: Deps, credential: Credential, q: Any, mode: Any, as_of: Any, entry_type: Any,
                  limit: Any) -> dict[str, Any]:
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
    if mode == "keyword":
        hits = Hits(await keyword_search(deps, credential, q, count, when, kind))
    else:
        hits = await hybrid_search(deps, credential, q, count, when, kind)
    readable = await readable_links(deps, credential, [row for row, _ in hits.found])
    return {
        "mode": mode,
        "as_of": when,
        "results": [fact_out(row, readable, score=round(score, 6)) for row, score in hits.found],
        "degraded": list(hits.degraded),
    }

"""Walled BM25 over one of the brain's two keyword corpora: fact rows (their hooks) and the
passages of long facts' full text.

Each FTS5 index is shared by every scope, so FTS5's own ``bm25()`` (whose document counts and
average length cover the whole index) would let a reader estimate how many walled rows hold a
term by watching scores. Scores here are BM25 computed from the caller's visible units alone:
FTS5 finds the units holding each term, ``highlight()`` counts the term's occurrences in a unit,
and document frequency, unit count and average length are taken inside the wall (a passage is
visible when its fact is). Nothing that ranks or selects a unit depends on one the caller cannot
read."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.rows import FACT_COLUMNS
from memvault.core.deps import Deps
from memvault.core.ranking import query_terms

# Terms scored per query: the rarest among the reader's units, so a long query keeps its signal.
MAX_SCORED_TERMS = 40
# BM25's usual constants (FTS5 uses the same).
K1, B = 1.2, 0.75
PHRASE_BONUS = 1000.0
# D1 binds at most 100 parameters per statement.
MAX_PARAMS = 100
_WORDS = re.compile(r"\w+", re.UNICODE)
Row = dict[str, Any]


@dataclass(frozen=True)
class Corpus:
    """One keyword-indexed unit. ``matched`` joins FTS5 to the unit and the unit to its fact ``m``
    (CROSS JOIN keeps FTS5 the outer loop, so a rare term stays cheap, and every unit it finds
    passes the wall on ``m`` before it counts); ``units`` is the same join without FTS5."""

    fts: str
    matched: str
    units: str
    alias: str
    text: str
    length: str
    result: str  # what is read of each top unit, joined on ``r.seq``


FACTS = Corpus(
    fts="memory_fts",
    matched="memory_fts CROSS JOIN memory m ON m.seq = memory_fts.rowid WHERE memory_fts MATCH",
    units="memory m",
    alias="m",
    text="m.content",
    length="m.content_chars",
    result="SELECT " + ", ".join(f"m.{c.strip()}" for c in FACT_COLUMNS.split(","))
    + ", r.phrase, r.bm FROM r CROSS JOIN memory m ON m.seq = r.seq",
)
PASSAGES = Corpus(
    fts="fact_passages_fts",
    matched="fact_passages_fts CROSS JOIN fact_passages p ON p.seq = fact_passages_fts.rowid "
    "CROSS JOIN memory m ON m.id = p.fact_id WHERE fact_passages_fts MATCH",
    units="fact_passages p CROSS JOIN memory m ON m.id = p.fact_id",
    alias="p",
    text="p.text",
    length="p.text_chars",
    result="SELECT p.fact_id AS fact_id, p.text AS passage, r.phrase, r.bm FROM r CROSS JOIN fact_passages p "
    "ON p.seq = r.seq",
)


def search_terms(query: str) -> list[str]:
    """The query's distinct searchable tokens: stopwords dropped, punctuation split off."""
    words = (word for term in query_terms(query) for word in re.sub(r"[^\w]", " ", term).split())
    return list(dict.fromkeys(words))


def phrase_of(query: str) -> str | None:
    """The whole query as one FTS5 phrase (stopwords kept), when it has two words or more."""
    words = _WORDS.findall(query.casefold())
    return f'"{" ".join(words)}"' if len(words) > 1 else None


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
    units: int
    total_length: int
    document_frequency: dict[str, int]


async def _stats(deps: Deps, corpus: Corpus, terms: Sequence[str], where: str, params: list[Any]) -> _Stats:
    """Unit count, total length and each term's document frequency, over the visible units only."""
    units, total, frequency = 0, 0, {}
    batch = MAX_PARAMS - len(params)
    for start in range(0, len(terms), batch):
        bound = _Bound(where, params)
        group = terms[start : start + batch]
        values = ", ".join(f"({i}, {bound.add(_quoted(term))})" for i, term in enumerate(group))
        sql = (f"WITH terms(i, q) AS (VALUES {values}) "
               f"SELECT -1 AS t, COUNT(*) AS n, SUM({corpus.length}) AS len FROM {corpus.units} WHERE {bound.where} "
               f"UNION ALL SELECT t.i, (SELECT COUNT(*) FROM {corpus.matched} t.q AND {bound.where}), NULL "
               "FROM terms t")
        for row in await deps.db.query(sql, bound.params):
            part = int(row["t"])
            if part < 0:
                units, total = int(row["n"]), int(row["len"] or 0)
            else:
                frequency[group[part]] = int(row["n"])
    return _Stats(units, total, frequency)


def _weights(stats: _Stats) -> dict[str, float]:
    """idf x (k1 + 1) of the rarest terms present; idf kept positive, as Lucene does, so a
    small brain still ranks."""
    present = sorted((df, index, term) for index, (term, df) in enumerate(stats.document_frequency.items()) if df)
    return {term: (K1 + 1.0) * math.log(1.0 + (stats.units - df + 0.5) / (df + 0.5))
            for df, _, term in present[:MAX_SCORED_TERMS]}


async def ranked(deps: Deps, corpus: Corpus, query: str, where: str, params: list[Any], limit: int) -> list[Row]:
    """The top ``limit`` visible units for ``query`` as ``corpus.result`` reads them, each with
    ``phrase`` (1 when the whole query matched as a phrase) and ``bm``, best first. Each term (and
    the whole phrase) is one row of a VALUES table that FTS5 is asked about in turn, so the scoring
    is one statement (D1 refuses a compound SELECT of more than five parts; a VALUES table is not
    one); a term's occurrences in a unit are the spans ``highlight()`` marks."""
    terms = search_terms(query)
    if not terms:
        return []
    stats = await _stats(deps, corpus, terms, where, params)
    weights = _weights(stats)
    if not weights:
        return []
    bound = _Bound(where, params)
    values = [f"({bound.add(weight)}, {bound.add(_quoted(term))}, 0)" for term, weight in weights.items()]
    phrase = phrase_of(query)
    if phrase is not None:
        values.append(f"(0, {bound.add(phrase)}, 1)")
    average = max(stats.total_length / max(stats.units, 1), 1.0)
    norm = f"{bound.add(K1 * (1.0 - B))} + {bound.add(K1 * B / average)} * len"
    unit = corpus.alias
    # The phrase row only marks a match, so it skips highlight().
    occurrences = (f"CASE t.p WHEN 1 THEN 0 ELSE max(1, length(highlight({corpus.fts}, 0, char(1), '')) "
                   f"- length({corpus.text})) END")
    # Materialized, so highlight() runs inside the FTS5 query that matched; only the top units are
    # read whole. A whole-phrase match outranks any scattered one; BM25 orders the rest and
    # recency breaks ties.
    sql = (f"WITH terms(w, q, p) AS (VALUES {', '.join(values)}), "
           f"hits AS MATERIALIZED (SELECT t.w AS w, t.p AS p, {occurrences} AS n, {unit}.seq AS seq, "
           f"{corpus.length} AS len, m.updated_at AS at, {unit}.id AS id FROM terms t CROSS JOIN {corpus.matched} t.q "
           f"AND {bound.where}), "
           f"r AS (SELECT seq, at, id, MAX(p) AS phrase, round(SUM(w * n / (n + {norm})), 9) AS bm FROM hits "
           f"GROUP BY seq ORDER BY phrase DESC, bm DESC, at DESC, id LIMIT {bound.add(limit)}) "
           f"{corpus.result} ORDER BY r.phrase DESC, r.bm DESC, r.at DESC, r.id")
    return await deps.db.query(sql, bound.params)


def score_of(hit: Row) -> float:
    """A unit's BM25, with the bonus of a whole-phrase match; pops both fields off the row."""
    bonus = PHRASE_BONUS if hit.pop("phrase") else 0.0
    return float(hit.pop("bm")) + bonus

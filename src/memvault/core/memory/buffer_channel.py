"""The pending buffer's part of a search, the same inside a vault and over its mirror.

Pending messages are the messages of one open chunk, scored by the rule stored ones are
(``fusion.py``). The vector channel holds each pending message that has a vector, and the open
chunk by the normalised mean of their vectors (as a stored chunk's is), ranked by cosine among the
stored rows' hits and cut to the same depth. A pending message has no full-text entry for BM25, so
its keyword evidence is the share of the query's terms it holds (the ``terms`` channel, which
fusion reads as BM25's share of the best), the open chunk's the share all its messages hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from memvault.core.memory.rows import message_row
from memvault.core.models import Candidate, MemoryRow, Message, SearchQuery
from memvault.core.ranking import query_terms
from memvault.core.vectors import exact_top, mean_unit, pack, unpack

# The open chunk's id, and the parent of every pending message's row (no stored row id looks like it).
OPEN_CHUNK = "buffer"


def is_pending(row: MemoryRow) -> bool:
    return row.parent_id == OPEN_CHUNK


def pending_row(message: Message) -> MemoryRow:
    """A pending message as a search sees it: a message of the open chunk (its metadata stays in the vault)."""
    return replace(message_row(message, OPEN_CHUNK), id=f"pending:{message.id}", metadata=None)


def _open_chunk(pending: Sequence[Message]) -> MemoryRow:
    return MemoryRow(
        id=OPEN_CHUNK,
        kind="chunk",
        text="",  # its messages carry the text; fusion needs the chunk's relevance only
        role="mixed",
        model=None,
        ts_start=min(m.timestamp for m in pending),
        ts_end=max(m.timestamp for m in pending),
        token_count=0,
        source_ids=tuple(m.id for m in pending),
        content_hash="",
    )


def with_buffer(
    candidates: Sequence[Candidate], pending: Sequence[Message], vectors: Mapping[str, bytes], query: SearchQuery
) -> list[Candidate]:
    """``candidates`` (the stored rows') with the pending messages' added; ``vectors`` holds the
    packed vectors of pending messages by message id."""
    if not pending:
        return list(candidates)
    rows = {m.id: pending_row(m) for m in pending}
    chunk = _open_chunk(pending)
    found = [c for c in candidates if c.channel != "vector"]
    hits = [(c.row, c.score, c) for c in candidates if c.channel == "vector"]
    if query.vector is not None:
        width = 4 * len(query.vector)
        stored = [(m.id, vectors[m.id]) for m in pending if len(vectors.get(m.id, b"")) == width]
        if stored:
            mean = pack(mean_unit([unpack(blob) for _, blob in stored]))
            scored = dict(exact_top(query.vector, [*stored, ("", mean)], len(stored) + 1))
            own = [Candidate(rows[i], "vector", 0, scored[i]) for i, _ in stored]
            hits += [(c.row, c.score, c) for c in [*own, Candidate(chunk, "vector", 0, scored[""])]]
    hits.sort(key=lambda hit: (-hit[1], hit[0].id))
    found += [Candidate(c.row, c.channel, rank, c.score, c.twin_of) for rank, (_, _, c) in enumerate(hits[: query.depth], start=1)]
    found += _term_candidates(pending, rows, chunk, query.text)
    return found + _context(found, rows)


def _context(found: Sequence[Candidate], rows: Mapping[str, MemoryRow]) -> list[Candidate]:
    """Once the open chunk is found, its messages no channel found come with it, as a stored
    chunk's do (each borrowing from the chunk and its neighbours)."""
    ranks = [c.rank for c in found if c.row.id == OPEN_CHUNK]
    if not ranks:
        return []
    seen = {c.row.id for c in found}
    return [Candidate(row, "context", min(ranks), 0.0) for row in rows.values() if row.id not in seen]


def _term_candidates(
    pending: Sequence[Message], rows: Mapping[str, MemoryRow], chunk: MemoryRow, text: str
) -> list[Candidate]:
    terms = set(query_terms(text))
    if not terms:
        return []
    held = {m.id: set(query_terms(m.content)) & terms for m in pending}
    shares = sorted(((len(h) / len(terms), i) for i, h in held.items() if h), key=lambda s: (-s[0], s[1]))
    found = [Candidate(rows[i], "terms", rank, share) for rank, (share, i) in enumerate(shares, start=1)]
    whole = set().union(*held.values())
    if whole:
        found.append(Candidate(chunk, "terms", 1, len(whole) / len(terms)))
    return found

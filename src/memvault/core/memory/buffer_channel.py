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
from memvault.core.vectors import VectorSet, mean_unit, pack, unpack

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


class PendingBuffer:
    """The pending messages as every search of them sees them, whatever the query: their rows,
    the open chunk's, their terms and their vectors with the open chunk's mean (worked out once,
    on first use, for each dimension a query has). A vault keeps one while its buffer is unchanged."""

    def __init__(self, pending: Sequence[Message], vectors: Mapping[str, bytes]) -> None:
        """``vectors`` holds the packed vectors of pending messages by message id."""
        self._pending = tuple(pending)
        self._vectors = dict(vectors)
        self._rows = {m.id: pending_row(m) for m in pending}
        self._chunk = _open_chunk(pending) if pending else None
        self._terms = {m.id: frozenset(query_terms(m.content)) for m in pending}
        self._by_width: dict[int, VectorSet | None] = {}

    def _vector_set(self, width: int) -> VectorSet | None:
        """The vectors of ``width`` bytes (by message id) and their mean (by ""), or None."""
        if width not in self._by_width:
            stored = [(m.id, self._vectors[m.id]) for m in self._pending if len(self._vectors.get(m.id, b"")) == width]
            mean = pack(mean_unit([unpack(blob) for _, blob in stored])) if stored else b""
            self._by_width[width] = (
                VectorSet([*(i for i, _ in stored), ""], [*(blob for _, blob in stored), mean], width // 4) if stored else None
            )
        return self._by_width[width]

    def joined(self, candidates: Sequence[Candidate], query: SearchQuery) -> list[Candidate]:
        """``candidates`` (the stored rows', their vector hits best first, ties by id, as every
        vector channel returns them) with the pending messages' added."""
        chunk = self._chunk
        if chunk is None:
            return list(candidates)
        found = [c for c in candidates if c.channel != "vector"]
        hits = [c for c in candidates if c.channel == "vector"]
        vectors = None if query.vector is None else self._vector_set(4 * len(query.vector))
        at: list[int] = []  # where the pending hits went among the stored ones
        if vectors is not None and query.vector is not None:
            own = [Candidate(self._rows[i] if i else chunk, "vector", 0, score)
                   for i, score in vectors.top_k(query.vector, len(vectors))]
            own.sort(key=lambda c: (-c.score, c.row.id))
            hits, at = _merged(hits, own)
        ranked = [c if c.rank == rank else Candidate(c.row, c.channel, rank, c.score, c.twin_of)
                  for rank, c in enumerate(hits[: query.depth], start=1)]
        terms = self._term_candidates(chunk, query.text)
        # Only the pending channels find pending rows (no stored row id looks like theirs).
        return [*found, *ranked, *terms, *self._context([*(ranked[i] for i in at if i < len(ranked)), *terms])]

    def _context(self, found: Sequence[Candidate]) -> list[Candidate]:
        """Once the open chunk is found (among ``found``, the pending rows found), its messages no
        channel found come with it, as a stored chunk's do (each borrowing from the chunk and its
        neighbours)."""
        ranks = [c.rank for c in found if c.row.id == OPEN_CHUNK]
        if not ranks:
            return []
        seen = {c.row.id for c in found}
        return [Candidate(row, "context", min(ranks), 0.0) for row in self._rows.values() if row.id not in seen]

    def _term_candidates(self, chunk: MemoryRow, text: str) -> list[Candidate]:
        terms = set(query_terms(text))
        if not terms:
            return []
        held = {i: own & terms for i, own in self._terms.items()}
        shares = sorted(((len(h) / len(terms), i) for i, h in held.items() if h), key=lambda s: (-s[0], s[1]))
        found = [Candidate(self._rows[i], "terms", rank, share) for rank, (share, i) in enumerate(shares, start=1)]
        whole = set().union(*held.values())
        if whole:
            found.append(Candidate(chunk, "terms", 1, len(whole) / len(terms)))
        return found


def _merged(stored: Sequence[Candidate], pending: Sequence[Candidate]) -> tuple[list[Candidate], list[int]]:
    """Two lists of hits, each best first with ties by row id, as one list in that order; and
    where each of ``pending`` went in it."""
    merged: list[Candidate] = []
    places: list[int] = []
    at = 0
    for hit in pending:
        score, row_id = hit.score, hit.row.id
        start = at
        while at < len(stored) and (stored[at].score > score or (stored[at].score == score and stored[at].row.id < row_id)):
            at += 1
        merged += stored[start:at]
        places.append(len(merged))
        merged.append(hit)
    merged += stored[at:]
    return merged, places


def with_buffer(
    candidates: Sequence[Candidate], pending: Sequence[Message], vectors: Mapping[str, bytes], query: SearchQuery
) -> list[Candidate]:
    """``candidates`` (the stored rows') with the pending messages' added; ``vectors`` holds the
    packed vectors of pending messages by message id."""
    return PendingBuffer(pending, vectors).joined(candidates, query)

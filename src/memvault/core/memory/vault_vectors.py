"""Vectors inside one vault, within the caller's transaction. Each message is embedded by the model
once: the write that takes it into the pending buffer hands it out and attaches its vector, and
its row takes that vector when the buffer is cut. A chunk's vector is the normalised mean of its messages' vectors
(``embedding.py`` says why), set as soon as every message of it has one; only a chunk that holds
no message row of its own (a later piece of a message longer than a chunk) needs the model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from memvault.core.models import EmbedJob, MemoryRow, PendingVector
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders
from memvault.core.vectors import binary_code, mean_unit, pack, unpack


def pending_vectors(sql: SyncSql) -> dict[str, bytes]:
    """Packed vectors of the pending messages that have one, by message id."""
    found = sql.execute("SELECT id, embedding FROM buffer WHERE embedding IS NOT NULL")
    return {str(r["id"]): bytes(r["embedding"]) for r in found}


def buffer_vectors(sql: SyncSql) -> tuple[PendingVector, ...]:
    """The pending messages' vectors, in buffer order, as the mirror keeps them."""
    found = sql.execute("SELECT id, embedding FROM buffer WHERE embedding IS NOT NULL ORDER BY seq")
    return tuple(PendingVector(str(r["id"]), tuple(unpack(bytes(r["embedding"])))) for r in found)


def attach_rows(sql: SyncSql, vectors: Mapping[str, Sequence[float]]) -> list[str]:
    """Attach vectors to stored rows by row id; returns the rows found."""
    changed = []
    for row_id, vector in vectors.items():
        if sql.execute("SELECT 1 AS hit FROM rows WHERE id = ?", (row_id,)):
            sql.execute("UPDATE rows SET embedding = ?, code = ? WHERE id = ?", (pack(vector), binary_code(vector), row_id))
            changed.append(row_id)
    return changed


def attach_pending(sql: SyncSql, vectors: Mapping[str, Sequence[float]]) -> tuple[int, list[str]]:
    """Attach vectors to pending messages by message id. A message cut into a row since it was
    handed out for embedding gives the vector to its row, if that row has none yet. Returns how
    many buffer entries took a vector, and the ids of rows that did."""
    buffered, rows = 0, []
    for message_id, vector in vectors.items():
        blob = pack(vector)
        if sql.execute("SELECT 1 AS hit FROM buffer WHERE id = ?", (message_id,)):
            sql.execute("UPDATE buffer SET embedding = ? WHERE id = ?", (blob, message_id))
            buffered += 1
            continue
        found = sql.execute(
            "SELECT id FROM rows WHERE kind = 'message' AND message_id = ? AND embedding IS NULL", (message_id,)
        )
        if found:
            sql.execute("UPDATE rows SET embedding = ?, code = ? WHERE id = ?", (blob, binary_code(vector), found[0]["id"]))
            rows.append(str(found[0]["id"]))
    return buffered, rows


def derive_chunk_vectors(sql: SyncSql, chunk_ids: Iterable[str]) -> list[str]:
    """Give each of these chunks that has no vector the mean of its message rows' vectors, once
    every one of them has a vector. Returns the chunks that got one."""
    derived: list[str] = []
    for batch in in_batches(list(dict.fromkeys(chunk_ids))):
        bare = [str(r["id"]) for r in sql.execute(
            f"SELECT id FROM rows WHERE kind = 'chunk' AND embedding IS NULL AND id IN ({placeholders(len(batch))})", batch
        )]
        if not bare:
            continue
        members: dict[str, list[bytes | None]] = {}
        for r in sql.execute(
            f"SELECT parent_id, embedding FROM rows WHERE kind = 'message' AND parent_id IN ({placeholders(len(bare))})",
            bare,
        ):
            members.setdefault(str(r["parent_id"]), []).append(None if r["embedding"] is None else bytes(r["embedding"]))
        for chunk_id in bare:
            blobs = members.get(chunk_id, [])
            if not blobs or any(blob is None for blob in blobs) or len({len(b) for b in blobs if b}) != 1:
                continue
            vector = mean_unit([unpack(blob) for blob in blobs if blob is not None])
            sql.execute("UPDATE rows SET embedding = ?, code = ? WHERE id = ?", (pack(vector), binary_code(vector), chunk_id))
            derived.append(chunk_id)
    return derived


def parents_of(sql: SyncSql, row_ids: Sequence[str]) -> list[str]:
    """The chunks holding these message rows."""
    parents: list[str] = []
    for batch in in_batches(list(row_ids)):
        parents += [str(r["p"]) for r in sql.execute(
            f"SELECT DISTINCT parent_id AS p FROM rows WHERE parent_id IS NOT NULL AND id IN ({placeholders(len(batch))})",
            batch,
        )]
    return parents


def embedded_at_cut(sql: SyncSql) -> set[str]:
    """Pending messages buffered before pending messages had vectors: their rows are embedded when
    they are cut, as every row was then."""
    return {str(r["id"]) for r in sql.execute("SELECT id FROM buffer WHERE embed_at_cut = 1")}


def jobs_for(
    sql: SyncSql, rows: Sequence[MemoryRow], derived: Iterable[str], owned: Iterable[str]
) -> tuple[EmbedJob, ...]:
    """What the model must embed for a change that created ``rows`` (``derived``: the chunks among
    them that got their messages' mean). ``owned`` names the messages whose embedding falls to this
    change: those it just took (still pending, or cut at once) and those buffered before pending
    vectors whose rows it cut. A row cut from a message another write took is not handed out: that
    write is embedding the message and attaches the vector to its row (``attach_pending``), and
    if it fails the nightly run does. Chunks that hold no message row are always handed out."""
    mine, done = set(owned), set(derived)
    bare = [row for row in rows if row.embedding is None and row.id not in done]
    held: set[str] = set()
    for batch in in_batches([row.id for row in bare if row.kind == "chunk"]):
        held.update(str(r["p"]) for r in sql.execute(
            f"SELECT DISTINCT parent_id AS p FROM rows WHERE kind = 'message' AND parent_id IN ({placeholders(len(batch))})",
            batch,
        ))
    jobs = [
        EmbedJob(row.id, row.text) for row in bare
        if (row.kind == "message" and row.source_ids[0] in mine) or (row.kind == "chunk" and row.id not in held)
    ]
    if mine:
        jobs += [EmbedJob(str(r["id"]), str(r["content"]), pending=True)
                 for r in sql.execute("SELECT id, content FROM buffer WHERE embedding IS NULL ORDER BY seq")
                 if str(r["id"]) in mine]
    return tuple(jobs)


def unembedded(sql: SyncSql, limit: int) -> list[EmbedJob]:
    """Up to ``limit`` texts still waiting for the model (a failed embedding, a vault older than
    pending vectors): pending messages first, then rows, oldest first. A chunk whose messages will
    give it their mean once they have vectors is not among them."""
    jobs = [
        EmbedJob(str(r["id"]), str(r["content"]), pending=True)
        for r in sql.execute("SELECT id, content FROM buffer WHERE embedding IS NULL ORDER BY seq LIMIT ?", (limit,))
    ]
    found = sql.execute(
        "SELECT id, text FROM rows r WHERE embedding IS NULL AND NOT (kind = 'chunk' AND EXISTS "
        "(SELECT 1 FROM rows m WHERE m.parent_id = r.id AND m.kind = 'message' AND m.embedding IS NULL)) "
        "ORDER BY ts_end LIMIT ?",
        (limit - len(jobs),),
    )
    return jobs + [EmbedJob(str(r["id"]), str(r["text"])) for r in found]

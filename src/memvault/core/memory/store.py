"""One conversation vault over a synchronous SQL port: the logic of a Vault Durable Object, and of
one local SQLite file. Every method is one short transaction, so a vault serves one request at a
time and never holds half a write; every mutation appends to the change log in that same
transaction, and the mirror is derived from the log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memvault.core.errors import Conflict, InvalidInput
from memvault.core.memory import changelog
from memvault.core.memory.chunking import ChunkPlan, plan_chunks
from memvault.core.memory.forgetting import forget_messages
from memvault.core.memory.listing import message_page
from memvault.core.memory.rows import (
    ROW_COLUMNS,
    chunk_row,
    insert_row,
    message_hash,
    message_row,
    row_from_sql,
)
from memvault.core.memory.schema import migrate
from memvault.core.memory.search_plan import search_plan
from memvault.core.memory.tables import VAULT_TABLE
from memvault.core.memory.vector_channel import codes_plan
from memvault.core.models import (
    AppendResult,
    Candidate,
    ChangeBatch,
    EmbeddingModel,
    EmbedJob,
    ForgetResult,
    MemoryRow,
    Message,
    MessagePage,
    SearchQuery,
    VaultStats,
)
from memvault.core.ports import SyncSql
from memvault.core.settings import Settings
from memvault.core.sql import in_batches, placeholders, run_sync
from memvault.core.vectors import CodeIndex, binary_code, code_of, pack

_ID_LOOKUPS = (
    "SELECT message_id AS v FROM rows WHERE message_id IN ({})",
    "SELECT id AS v FROM buffer WHERE id IN ({})",
    "SELECT message_id AS v FROM aliases WHERE message_id IN ({})",
)
_TEXT_LOOKUPS = (
    "SELECT content_hash AS v FROM rows WHERE kind = 'message' AND content_hash IN ({})",
    "SELECT content_hash AS v FROM buffer WHERE content_hash IN ({})",
)


@dataclass(frozen=True)
class VaultLimits:
    """The settings a vault works within, wherever it runs."""

    chunk_tokens: int
    overlap_tokens: int
    memory_bytes: int  # for the vector codes kept in memory

    @classmethod
    def of(cls, settings: Settings) -> VaultLimits:
        return cls(settings.chunk_tokens, settings.chunk_overlap_tokens, settings.vector_memory_mb * 1024 * 1024)


class VaultStore:
    def __init__(self, sql: SyncSql, limits: VaultLimits) -> None:
        self._sql = sql
        self._chunk_tokens = limits.chunk_tokens
        self._overlap_tokens = limits.overlap_tokens
        self._codes: CodeIndex | None = None
        self._memory_budget = limits.memory_bytes
        migrate(sql)

    def _meta(self, key: str) -> str | None:
        rows = self._sql.execute("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def _set_meta(self, key: str, value: str) -> None:
        self._sql.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _state(self, rows: Sequence[MemoryRow], accepted: int) -> AppendResult:
        """Log the rows created and the buffer's new version; report both."""
        changelog.log(self._sql, changelog.ROWS, [row.id for row in rows])
        self._set_meta("buffer_version", str(int(self._meta("buffer_version") or 0) + 1))
        changelog.log(self._sql, changelog.BUFFER)
        buffer = changelog.buffer_state(self._sql)
        return AppendResult(
            rows=tuple(rows),
            buffer=buffer.messages,
            buffered_tokens=buffer.tokens,
            buffer_version=buffer.version,
            accepted=accepted,
        )

    def _stored_message(self, message_id: str) -> tuple[str, str] | None:
        """Role and text stored under a message id (its own, or one it repeated), in a row or in
        the buffer."""
        found = self._sql.execute(
            "SELECT role, text FROM rows WHERE kind = 'message' AND message_id IN "
            "(?, (SELECT canonical FROM aliases WHERE message_id = ?)) "
            "UNION ALL SELECT role, content AS text FROM buffer WHERE id IN "
            "(?, (SELECT canonical FROM aliases WHERE message_id = ?)) LIMIT 1",
            (message_id, message_id, message_id, message_id),
        )
        return (str(found[0]["role"]), str(found[0]["text"])) if found else None

    def _new_messages(self, messages: Sequence[Message]) -> list[tuple[Message, int]]:
        """The messages not stored yet. An id names one message per vault: sent again with the same
        role and text it is a re-send, stored once; with other text it is a conflict. A new id
        whose text is already stored is that message said again: it counts one more occurrence."""
        seen: dict[str, tuple[str, str]] = {}
        fresh: dict[str, tuple[Message, int]] = {}
        digests = {message.id: message_hash(message) for message in messages}
        # Two lookups for the whole batch; a message only costs more when its id or text is known.
        known_ids = self._present(_ID_LOOKUPS, list(digests))
        known_texts = self._present(_TEXT_LOOKUPS, list(set(digests.values())))
        for message in messages:
            earlier = seen.get(message.id) or (self._stored_message(message.id) if message.id in known_ids else None)
            if earlier is not None:
                if earlier != (message.role, message.content):
                    raise Conflict(f"message id {message.id!r} is already stored with other content")
                continue
            seen[message.id] = (message.role, message.content)
            digest = digests[message.id]
            if digest in fresh:
                first, count = fresh[digest]
                fresh[digest] = (replace(first, timestamp=max(first.timestamp, message.timestamp)), count + 1)
                self._said_again(digest, message, first.id)
            elif digest not in known_texts or not self._said_again(digest, message, None):
                fresh[digest] = (message, 1)
        return list(fresh.values())

    def _present(self, lookups: Sequence[str], values: Sequence[str]) -> set[str]:
        """Which of ``values`` each ``lookup`` (a SELECT of one column, ``{}`` for the IN list) finds."""
        found: set[str] = set()
        for batch in in_batches(list(values)):
            for lookup in lookups:
                found.update(str(r["v"]) for r in self._sql.execute(lookup.format(placeholders(len(batch))), batch))
        return found

    def _said_again(self, digest: str, message: Message, canonical: str | None) -> bool:
        """Count ``message`` as one more occurrence of the stored message with its text, if there
        is one (or of ``canonical``, earlier in the same batch); whether it was."""
        if canonical is None:
            row = self._sql.execute(
                "SELECT id, message_id FROM rows WHERE kind = 'message' AND content_hash = ?", (digest,)
            )
            if row:
                self._sql.execute(
                    "UPDATE rows SET occurrences = occurrences + 1, ts_end = max(ts_end, ?) WHERE id = ?",
                    (message.timestamp, row[0]["id"]),
                )
                changelog.log(self._sql, changelog.ROWS, [str(row[0]["id"])])
                canonical = str(row[0]["message_id"])
            else:
                pending = self._sql.execute("SELECT id FROM buffer WHERE content_hash = ?", (digest,))
                if not pending:
                    return False
                self._sql.execute(
                    "UPDATE buffer SET occurrences = occurrences + 1, ts = max(ts, ?) WHERE id = ?",
                    (message.timestamp, pending[0]["id"]),
                )
                canonical = str(pending[0]["id"])
        self._sql.execute(
            "INSERT INTO aliases (message_id, canonical) VALUES (?, ?) ON CONFLICT (message_id) DO NOTHING",
            (message.id, canonical),
        )
        return True

    def _store_plans(self, plans: Sequence[ChunkPlan]) -> list[MemoryRow]:
        created: list[MemoryRow] = []
        stored_messages: set[str] = set()
        for plan in plans:
            chunk = chunk_row(plan.text, plan.messages)
            if insert_row(self._sql, chunk, plan.carry_chars):
                created.append(chunk)
            for message in plan.messages:
                if message.id in stored_messages:
                    continue
                stored_messages.add(message.id)
                row = message_row(message, parent_id=chunk.id)
                if insert_row(self._sql, row):
                    created.append(row)
                self._sql.execute(
                    "DELETE FROM buffer WHERE id = ? AND content_hash = ?", (message.id, row.content_hash)
                )
        return created

    def _cut(self, flush: bool) -> list[MemoryRow]:
        carry = self._meta("carry") or ""
        buffer = list(changelog.buffer_state(self._sql).messages)
        plans, _, carry = plan_chunks(buffer, carry, self._chunk_tokens, self._overlap_tokens, flush=flush)
        created = self._store_plans(plans)
        self._set_meta("carry", carry)
        return created

    def append(self, messages: Sequence[Message], model: EmbeddingModel | None = None) -> AppendResult:
        """Take messages into the buffer (cutting chunks when it is full). With ``model``, refuse
        first, in the same transaction, if the vault holds another model's vectors."""

        def work() -> AppendResult:
            if model is not None:
                self._refuse_other_model(model)
            fresh = self._new_messages(messages)
            for message, occurrences in fresh:
                self._sql.execute(
                    "INSERT INTO buffer (id, role, content, ts, model, content_hash, occurrences, metadata) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (message.id, message.role, message.content, message.timestamp, message.model, message_hash(message),
                     occurrences, message.metadata),
                )
            return self._state(self._cut(flush=False), len(fresh))

        return self._sql.transaction(work)

    def _refuse_other_model(self, model: EmbeddingModel) -> None:
        stored, stored_model = self._meta("dimension"), self._meta("model_id")
        if stored is not None and (int(stored) != model.dimension or stored_model != model.model_id):
            raise Conflict(
                f"this memory holds {stored}-d embeddings of {stored_model} and the embedder is {model.model_id} "
                f"({model.dimension}-d); clear it with reset=true to switch"
            )

    def flush(self) -> AppendResult:
        return self._sql.transaction(lambda: self._state(self._cut(flush=True), 0))

    def attach_embeddings(self, model_id: str, embeddings: dict[str, list[float]]) -> int:
        if not embeddings:
            return 0
        dimension = len(next(iter(embeddings.values())))
        if any(len(vector) != dimension for vector in embeddings.values()):
            raise InvalidInput("embeddings of one call must share a dimension")

        def work() -> list[str]:
            stored = self._meta("dimension")
            if stored is not None and (int(stored) != dimension or self._meta("model_id") != model_id):
                raise InvalidInput(
                    f"this vault holds {stored}-d embeddings of {self._meta('model_id')}; reset it to use {model_id}"
                )
            self._set_meta("dimension", str(dimension))
            self._set_meta("model_id", model_id)
            changed = []
            for row_id, vector in embeddings.items():
                if self._sql.execute("SELECT 1 AS hit FROM rows WHERE id = ?", (row_id,)):
                    self._sql.execute(
                        "UPDATE rows SET embedding = ?, code = ? WHERE id = ?", (pack(vector), binary_code(vector), row_id)
                    )
                    changed.append(row_id)
            changelog.log(self._sql, changelog.ROWS, changed)
            return changed

        changed = self._sql.transaction(work)
        if self._codes is not None and self._codes.width == (dimension + 7) // 8:
            found = self._sql.execute(
                f"SELECT rowid AS rid, code FROM rows WHERE id IN ({placeholders(len(changed))})", changed
            ) if changed else []
            self._codes.add([int(r["rid"]) for r in found], [bytes(r["code"]) for r in found])
            if self._codes.memory_bytes > self._memory_budget:
                self._codes = None  # grown past the budget: searches read the codes in pages from now on
        return len(changed)

    def _code_index(self) -> CodeIndex | None:
        """The vault's codes in memory, built on first use; None past the memory budget (the codes
        are then read in pages on each search)."""
        if self._codes is None:
            dimension = self._meta("dimension")
            if dimension is None:
                return None
            self._fill_missing_codes()
            width = (int(dimension) + 7) // 8
            count = int(self._sql.execute("SELECT COUNT(*) AS n FROM rows WHERE code IS NOT NULL")[0]["n"])
            if count * (8 + width) > self._memory_budget:
                return None
            self._codes = run_sync(codes_plan(VAULT_TABLE, width), self._sql.execute)
        return self._codes

    def _fill_missing_codes(self) -> None:
        """Codes of vectors stored before codes were (unlogged: the mirror computes its own)."""
        while found := self._sql.execute(
            "SELECT rowid AS rid, embedding FROM rows WHERE code IS NULL AND embedding IS NOT NULL LIMIT 500"
        ):
            for row in found:
                self._sql.execute("UPDATE rows SET code = ? WHERE rowid = ?", (code_of(row["embedding"]), row["rid"]))

    def drop_code_index(self) -> None:
        """Let go of the codes in memory (another process changed the rows); the next search reads them again."""
        self._codes = None

    def search(self, query: SearchQuery) -> list[Candidate]:
        return run_sync(search_plan(VAULT_TABLE, query, self._code_index()), self._sql.execute)

    def pending(self) -> list[Message]:
        return list(changelog.buffer_state(self._sql).messages)

    def unembedded(self, limit: int) -> list[EmbedJob]:
        found = self._sql.execute("SELECT id, text FROM rows WHERE embedding IS NULL ORDER BY ts_end LIMIT ?", (limit,))
        return [EmbedJob(id=r["id"], text=r["text"]) for r in found]

    def rows(self, after: str | None, limit: int) -> list[MemoryRow]:
        found = self._sql.execute(
            f"SELECT {ROW_COLUMNS}, embedding FROM rows WHERE id > ? ORDER BY id LIMIT ?", (after or "", limit)
        )
        return [row_from_sql(d) for d in found]

    def messages(self, after: int, limit: int) -> MessagePage:
        return self._sql.transaction(lambda: message_page(self._sql, after, limit))

    def recent_messages(self, limit: int, offset: int) -> list[MemoryRow]:
        """Stored messages, newest first (those of the same moment, last stored first)."""
        found = self._sql.execute(
            f"SELECT {ROW_COLUMNS}, metadata FROM rows WHERE kind = 'message' ORDER BY ts_end DESC, rowid DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [row_from_sql(d) for d in found]

    def clear(self, reset: bool) -> None:
        def work() -> None:
            self._sql.execute("DELETE FROM rows")
            self._sql.execute("DELETE FROM buffer")
            self._sql.execute("DELETE FROM meta WHERE key = 'carry'")
            if reset:
                self._sql.execute("DELETE FROM meta WHERE key IN ('dimension', 'model_id')")
            changelog.log(self._sql, changelog.CLEAR)

        self._sql.transaction(work)
        self._codes = None

    def forget(self, ids: Sequence[str]) -> ForgetResult:
        def work() -> ForgetResult:
            done, carry = forget_messages(self._sql, ids, self._meta("carry") or "")
            self._set_meta("carry", carry)
            changelog.log(self._sql, changelog.DELETE, done.removed)
            changelog.log(self._sql, changelog.ROWS, done.moved)
            return ForgetResult(done.forgotten, done.removed, self._state(done.created, 0))

        result = self._sql.transaction(work)
        if result.removed:
            self._codes = None
            # Merge the keyword index's segments so the forgotten terms leave it now, not at some later merge.
            self._sql.execute("INSERT INTO rows_fts (rows_fts) VALUES ('optimize')")
        return result

    def generation(self) -> int:
        return changelog.head(self._sql)

    def delete_older_than(self, cutoff: float) -> list[str]:
        def work() -> list[str]:
            ids = [r["id"] for r in self._sql.execute("SELECT id FROM rows WHERE ts_end < ?", (cutoff,))]
            self._sql.execute("DELETE FROM rows WHERE ts_end < ?", (cutoff,))
            changelog.log(self._sql, changelog.DELETE, ids)
            if self._sql.execute("SELECT 1 AS hit FROM buffer WHERE ts < ? LIMIT 1", (cutoff,)):
                self._sql.execute("DELETE FROM buffer WHERE ts < ?", (cutoff,))
                self._state((), 0)
            return ids

        ids = self._sql.transaction(work)
        if ids:
            self._codes = None
        return ids

    def changes(self, after: int, max_entries: int, max_rows: int) -> ChangeBatch:
        return self._sql.transaction(lambda: changelog.read(self._sql, after, max_entries, max_rows))

    def trim(self, upto: int) -> None:
        self._sql.transaction(lambda: changelog.trim(self._sql, upto))

    def stats(self) -> VaultStats:
        # Separate small queries, each answered from an index rather than a scan of every row.
        kinds = {r["kind"]: int(r["n"]) for r in self._sql.execute("SELECT kind, COUNT(*) AS n FROM rows GROUP BY kind")}
        unembedded = self._sql.execute("SELECT COUNT(*) AS n FROM rows WHERE embedding IS NULL")[0]["n"]
        oldest = self._sql.execute("SELECT MIN(ts_end) AS t FROM rows")[0]["t"]
        newest = self._sql.execute("SELECT MAX(ts_end) AS t FROM rows")[0]["t"]
        buffer = changelog.buffer_state(self._sql)
        dimension = self._meta("dimension")
        return VaultStats(
            messages=kinds.get("message", 0),
            chunks=kinds.get("chunk", 0),
            unembedded=int(unembedded),
            buffered_messages=len(buffer.messages),
            buffered_tokens=buffer.tokens,
            dimension=None if dimension is None else int(dimension),
            oldest=oldest,
            newest=newest,
            search_memory_bytes=0 if self._codes is None else self._codes.memory_bytes,
        )

"""One conversation vault over a synchronous SQL port: the logic of a Vault Durable Object, and of
one local SQLite file. Every method is one short transaction, so a vault serves one request at a
time and never holds half a write; every mutation appends to the change log in that same
transaction, and the mirror is derived from the log."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from memvault.core.errors import Conflict, InvalidInput
from memvault.core.memory import changelog, vault_vectors
from memvault.core.memory.accounting import stored_usage
from memvault.core.memory.buffer_channel import PendingBuffer
from memvault.core.memory.chunking import ChunkPlan, plan_chunks
from memvault.core.memory.codes import VaultCodes
from memvault.core.memory.forgetting import forget_messages
from memvault.core.memory.intake import new_messages
from memvault.core.memory.keyword_channel import keyword_plan
from memvault.core.memory.listing import message_page
from memvault.core.memory.prepared_search import PreparedSearches
from memvault.core.memory.resident import ResidentRows, ResidentSet
from memvault.core.memory.rows import (
    ROW_COLUMNS,
    chunk_row,
    insert_row,
    message_hash,
    message_row,
    row_from_sql,
)
from memvault.core.memory.schema import migrate
from memvault.core.memory.search_plan import after_keywords_plan, search_plan
from memvault.core.memory.tables import VAULT_TABLE
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
    UsageNote,
    VaultStats,
)
from memvault.core.ports import SyncSql
from memvault.core.settings import Settings
from memvault.core.sql import run_sync
from memvault.core.tuning import Tuning
from memvault.core.vectors import CodeIndex, unpack

T = TypeVar("T")


@dataclass(frozen=True)
class VaultLimits:
    """What a vault works within, wherever it runs: the memory its vector codes may take and the
    memory its rows may take held for searches (settings; the rows' is capped by the codes'), and
    the product's tuning (chunk shape, bounds of the search channels)."""

    memory_bytes: int
    tuning: Tuning = field(default_factory=Tuning)
    rows_bytes: int = 16 * 1024 * 1024

    @classmethod
    def of(cls, settings: Settings, tuning: Tuning | None = None) -> VaultLimits:
        mb = 1024 * 1024
        return cls(settings.vector_memory_mb * mb, tuning or Tuning(), settings.search_rows_mb * mb)


def _never() -> bool:
    return False


@dataclass(frozen=True)
class _SearchState:
    """What every search of a vault reads beside its rows, as it was at one head of its change
    log: every write moves the head, so it holds until the next write."""

    head: int
    dimension: int | None
    buffer: PendingBuffer


class VaultStore:
    """Every public method is an operation of the ``VaultClient`` port, with its signature
    (``vault_table``); everything else here is private."""

    def __init__(self, sql: SyncSql, limits: VaultLimits, written_elsewhere: Callable[[], bool] = _never) -> None:
        """``written_elsewhere`` tells whether another process wrote the vault's storage since it
        was last asked (a local vault file can be; a Durable Object's storage cannot)."""
        self._sql = sql
        self._written_elsewhere = written_elsewhere
        self._tuning = limits.tuning
        self._codes = VaultCodes(sql, limits.memory_bytes, limits.tuning.code_page_rows)
        self._resident = ResidentRows(sql, min(limits.rows_bytes, limits.memory_bytes))
        self._coded: list[str] = []  # rows the running mutation gave a vector, for the codes in memory
        self._prepared = PreparedSearches()
        self._at_head: _SearchState | None = None
        migrate(sql)

    def _meta(self, key: str) -> str | None:
        rows = self._sql.execute("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def _dimension(self) -> int | None:
        stored = self._meta("dimension")
        return None if stored is None else int(stored)

    def _set_meta(self, key: str, value: str) -> None:
        self._sql.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _state(self, rows: Sequence[MemoryRow], accepted: int, owned: Sequence[str] = ()) -> AppendResult:
        """Give the chunks created the mean of their messages' vectors where every one has a vector,
        log the rows created and the buffer's new version; report both, and what the model must
        embed for this change (``owned``: the messages whose embedding falls to it, see
        ``vault_vectors.jobs_for``). The vectors stay in the vault."""
        derived = vault_vectors.derive_chunk_vectors(self._sql, [row.id for row in rows if row.kind == "chunk"])
        jobs = vault_vectors.jobs_for(self._sql, rows, derived, owned)
        self._coded += [row.id for row in rows if row.embedding is not None] + derived
        changelog.log(self._sql, changelog.ROWS, [row.id for row in rows])
        self._set_meta("buffer_version", str(int(self._meta("buffer_version") or 0) + 1))
        changelog.log(self._sql, changelog.BUFFER)
        buffer = changelog.buffer_state(self._sql)
        return AppendResult(
            rows=tuple(replace(row, embedding=None) for row in rows),
            buffer=buffer.messages,
            buffered_tokens=buffer.tokens,
            buffer_version=buffer.version,
            accepted=accepted,
            to_embed=jobs,
        )

    def _store_plans(self, plans: Sequence[ChunkPlan]) -> tuple[list[MemoryRow], list[str]]:
        """Store the chunks cut and their messages' rows, each row taking the vector its message
        had while pending. Also returns the messages cut whose rows are embedded at the cut (those
        buffered before pending messages had vectors)."""
        created: list[MemoryRow] = []
        stored_messages: set[str] = set()
        vectors = vault_vectors.pending_vectors(self._sql) if plans else {}
        earlier = vault_vectors.embedded_at_cut(self._sql) if plans else set()
        for plan in plans:
            chunk = chunk_row(plan.text, plan.messages)
            if insert_row(self._sql, chunk, plan.carry_chars):
                created.append(chunk)
            for message in plan.messages:
                if message.id in stored_messages:
                    continue
                stored_messages.add(message.id)
                vector = vectors.get(message.id)
                row = message_row(message, chunk.id, None if vector is None else tuple(unpack(vector)))
                if insert_row(self._sql, row):
                    created.append(row)
                self._sql.execute(
                    "DELETE FROM buffer WHERE id = ? AND content_hash = ?", (message.id, row.content_hash)
                )
        return created, sorted(stored_messages & earlier)

    def _cut(self, flush: bool) -> tuple[list[MemoryRow], list[str]]:
        carry = self._meta("carry") or ""
        buffer = list(changelog.buffer_state(self._sql).messages)
        plans, _, carry = plan_chunks(buffer, carry, self._tuning.chunk_tokens, self._tuning.chunk_overlap_tokens, flush=flush)
        cut = self._store_plans(plans)
        self._set_meta("carry", carry)
        return cut

    def append(
        self, messages: Sequence[Message], model: EmbeddingModel | None = None, usage: UsageNote | None = None
    ) -> AppendResult:
        """Take messages into the buffer (cutting chunks when it is full), and hand the new ones out
        for embedding (``to_embed``). With ``model``, refuse first, in the same transaction, if the
        vault holds another model's vectors. ``usage`` goes into the change log in that transaction,
        its messages and their tokens as many as the vault took: a batch sent again (a client's
        retry) is stored once and counted once."""

        def work() -> AppendResult:
            if model is not None:
                self._refuse_other_model(model)
            taken = self._take(new_messages(self._sql, messages))
            if usage is not None and (note := _taken_usage(usage, [message for message, _ in taken])) is not None:
                changelog.log_usage(self._sql, note)
            fresh = [message.id for message, _ in taken]
            created, earlier = self._cut(flush=False)
            return self._state(created, len(fresh), [*fresh, *earlier])

        return self._written(work)

    def _take(self, fresh: list[tuple[Message, int]]) -> list[tuple[Message, int]]:
        """Put the new messages (each with how often it was said) into the buffer."""
        for message, occurrences in fresh:
            self._sql.execute(
                "INSERT INTO buffer (id, role, content, ts, model, content_hash, occurrences, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (message.id, message.role, message.content, message.timestamp, message.model, message_hash(message),
                 occurrences, message.metadata),
            )
        return fresh

    def _written(self, work: Callable[[], T]) -> T:
        """Run a mutation in one transaction, then add the codes of the vectors it stored to the
        index in memory."""
        self._coded = []
        result = self._sql.transaction(work)
        self._codes.add(self._coded)
        return result

    def _refuse_other_model(self, model: EmbeddingModel) -> None:
        stored, stored_model = self._meta("dimension"), self._meta("model_id")
        if stored is not None and (int(stored) != model.dimension or stored_model != model.model_id):
            raise Conflict(
                f"this memory holds {stored}-d embeddings of {stored_model} and the embedder is {model.model_id} "
                f"({model.dimension}-d); clear it with reset=true to switch"
            )

    def _hold_model(self, model_id: str, dimension: int) -> None:
        """Record that the vault holds this model's vectors; refuse if it holds another's."""
        stored = self._meta("dimension")
        if stored is not None and (int(stored) != dimension or self._meta("model_id") != model_id):
            raise InvalidInput(
                f"this vault holds {stored}-d embeddings of {self._meta('model_id')}; reset it to use {model_id}"
            )
        self._set_meta("dimension", str(dimension))
        self._set_meta("model_id", model_id)
        self._at_head = None  # the dimension may be new while the log's head stays (nothing else attached)

    def flush(self) -> AppendResult:
        def work() -> AppendResult:
            created, earlier = self._cut(flush=True)
            return self._state(created, 0, earlier)

        return self._written(work)

    def attach_embeddings(
        self, model_id: str, embeddings: dict[str, list[float]], pending: dict[str, list[float]] | None = None,
        usage: UsageNote | None = None,
    ) -> int:
        """Vectors for stored rows (by row id) and pending messages (by message id), in one
        transaction; the chunks whose messages now all have vectors get their mean. ``usage`` goes
        into the change log in that transaction."""
        every = [*embeddings.values(), *(pending or {}).values()]
        if not every:
            return 0
        dimension = len(every[0])
        if any(len(vector) != dimension for vector in every):
            raise InvalidInput("embeddings of one call must share a dimension")

        def work() -> int:
            self._hold_model(model_id, dimension)
            if usage is not None:
                changelog.log_usage(self._sql, usage)
            changed = vault_vectors.attach_rows(self._sql, embeddings)
            buffered, taken = vault_vectors.attach_pending(self._sql, pending or {})
            derived = vault_vectors.derive_chunk_vectors(self._sql, vault_vectors.parents_of(self._sql, changed + taken))
            self._coded += changed + taken + derived
            changelog.log(self._sql, changelog.ROWS, changed + taken + derived)
            if buffered:
                changelog.log(self._sql, changelog.BUFFER)
            return len(changed) + len(taken) + buffered

        return self._written(work)

    def prepare_search(self, text: str, depth: int) -> None:
        """Run the keyword stage of a coming search of ``text`` (``depth`` candidates), and bring
        the rows held in memory to the vault's head (or load the vector codes when the rows do not
        fit): the vault's work that needs no query vector, done while the query is embedded. The
        candidates wait for that search (``search``)."""
        self._forget_if_written_elsewhere()
        # The generation is read before the rows: a write after it makes the candidates unusable.
        generation = changelog.head(self._sql)
        resident, _ = self._searched(generation, load=True)
        query = SearchQuery(text=text, vector=None, depth=depth)
        plan = keyword_plan(VAULT_TABLE, query, self._tuning.keyword_postings, None if resident is None else resident.rows)
        self._prepared.keep((text, depth, generation), run_sync(plan, self._sql.execute))

    def search(self, query: SearchQuery) -> list[Candidate]:
        self._forget_if_written_elsewhere()
        head = changelog.head(self._sql)
        prepared = self._prepared.take((query.text, query.depth, head)) if self._prepared else None
        # Rows are read into memory in the keyword stage, which waits for the query's vector anyway.
        resident, codes = self._searched(head, load=prepared is None)
        if prepared is None:
            plan = search_plan(VAULT_TABLE, query, self._tuning, codes, resident)
        else:
            plan = after_keywords_plan(VAULT_TABLE, query, self._tuning, prepared, codes, resident)
        found = run_sync(plan, self._sql.execute)
        return self._state_at(head).buffer.joined(found, query)

    def _forget_if_written_elsewhere(self) -> None:
        if self._written_elsewhere():
            # What is in memory may miss rows the other process changed (its log says which, but
            # the file may also have been replaced).
            self._codes.drop()
            self._resident.drop()
            self._at_head = None

    def _state_at(self, head: int) -> _SearchState:
        kept = self._at_head
        if kept is None or kept.head != head:
            pending = changelog.buffer_messages(self._sql)
            vectors = vault_vectors.pending_vectors(self._sql) if pending else {}
            kept = self._at_head = _SearchState(head, self._dimension(), PendingBuffer(pending, vectors))
        return kept

    def _searched(self, head: int, load: bool) -> tuple[ResidentSet | None, CodeIndex | None]:
        """What a search reads in memory: the rows at the vault's head (``head``) when they fit and
        are all read (``load``: read a page more now), else the vector codes when they fit."""
        dimension = self._state_at(head).dimension
        resident = self._resident.current(dimension, load, head)
        if resident is not None:
            self._codes.drop()
            return resident, None
        return None, self._codes.index(dimension)

    def pending(self) -> list[Message]:
        return list(changelog.buffer_state(self._sql).messages)

    def unembedded(self, limit: int) -> list[EmbedJob]:
        return vault_vectors.unembedded(self._sql, limit)

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
        self._codes.drop()

    def forget(self, ids: Sequence[str]) -> ForgetResult:
        def work() -> ForgetResult:
            done, carry = forget_messages(self._sql, ids, self._meta("carry") or "")
            self._set_meta("carry", carry)
            changelog.log(self._sql, changelog.DELETE, done.removed)
            changelog.log(self._sql, changelog.ROWS, done.moved)
            return ForgetResult(done.forgotten, done.removed, self._state(done.created, 0))

        result = self._written(work)
        if result.removed:
            self._codes.drop()
            # Merge the keyword index's segments so the forgotten terms leave it now, not at some later merge.
            self._sql.execute("INSERT INTO rows_fts (rows_fts) VALUES ('optimize')")
        return result

    def generation(self) -> int:
        return changelog.head(self._sql)

    def delete_older_than(self, cutoff: float) -> list[str]:
        """Delete what was said before ``cutoff``: the ids of the rows deleted, then of the pending
        messages (not yet in a row) deleted."""
        def work() -> tuple[list[str], list[str]]:
            ids = [r["id"] for r in self._sql.execute("SELECT id FROM rows WHERE ts_end < ?", (cutoff,))]
            self._sql.execute("DELETE FROM rows WHERE ts_end < ?", (cutoff,))
            changelog.log(self._sql, changelog.DELETE, ids)
            pending = [str(r["id"]) for r in self._sql.execute("SELECT id FROM buffer WHERE ts < ?", (cutoff,))]
            if pending:
                self._sql.execute("DELETE FROM buffer WHERE ts < ?", (cutoff,))
                self._state((), 0)
            return ids, pending

        ids, pending = self._sql.transaction(work)
        if ids:
            self._codes.drop()
        return ids + pending

    def changes(self, after: int, max_entries: int, max_rows: int) -> ChangeBatch:
        return self._sql.transaction(lambda: changelog.read(self._sql, after, max_entries, max_rows))

    def trim(self, upto: int) -> None:
        self._sql.transaction(lambda: changelog.trim(self._sql, upto))

    def stats(self) -> VaultStats:
        # Separate small queries, each answered from an index rather than a scan of every row.
        kinds = {r["kind"]: int(r["n"]) for r in self._sql.execute("SELECT kind, COUNT(*) AS n FROM rows GROUP BY kind")}
        unembedded = self._sql.execute(
            "SELECT (SELECT COUNT(*) FROM rows WHERE embedding IS NULL) + "
            "(SELECT COUNT(*) FROM buffer WHERE embedding IS NULL) AS n"
        )[0]["n"]
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
            search_memory_bytes=self._codes.memory_bytes + self._resident.memory_bytes,
        )


def _taken_usage(usage: UsageNote, taken: Sequence[Message]) -> UsageNote | None:
    """``usage`` with the messages of ``taken`` and their tokens counted as stored; None when it counts nothing."""
    stored = stored_usage(taken)
    counts = {**usage.counts, "messages_stored": stored.messages_stored, "tokens_stored": stored.tokens_stored}
    counts = {name: count for name, count in counts.items() if count}
    return UsageNote(usage.at, counts) if counts else None

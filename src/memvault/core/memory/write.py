"""The only functions that write conversation memory. Each registers the vault first (a write that
cannot register fails), changes the vault (which logs the change in the same transaction), embeds
what it stored (pending messages included), then brings the mirror up to date from the vault's log: awaited locally, in the
background on Workers. A failed sync leaves the entries in the log, for the next write to that
vault, the local server's startup or the nightly run."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from memvault.core.cpu import gated_off_loop
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput, MemvaultError, StorageUnavailable
from memvault.core.memory import journal
from memvault.core.memory.embedding import attach_vectors, embed_jobs
from memvault.core.memory.metadata import redact_metadata
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.names import vault_name
from memvault.core.memory.sync import rebuild_mirror, sync_mirror
from memvault.core.models import AppendResult, EmbeddingModel, Message, StoreResult, UsageNote
from memvault.core.ports import VaultClient
from memvault.core.receipts.store import ReceiptStore
from memvault.core.redaction import redact
from memvault.core.redaction.recall import passed_when_written

log = logging.getLogger(__name__)


async def store_conversation(
    deps: Deps, key_id: str, messages: Sequence[Message], session_id: str | None = None, counted: bool = False
) -> StoreResult:
    """Store messages (from ``messages.message_from``) in order into the key's core vault (or its
    session vault), then mirror them. Every message goes into the vault in one transaction, so a
    failure or a crash leaves all of them stored or none; they are then embedded and their vectors
    attached ``embed_batch`` at a time (``embed_jobs``), so the model's vectors never pile up in
    memory, and a row whose vector did not arrive is found by keyword until the nightly run embeds
    it. The mirror then applies the vault's log in bounded pages. ``counted``: what the store uses
    (messages, tokens, embeddings) is logged with the messages and with each slice of vectors, in
    their transactions, and reaches the key's usage ledger with the mirror."""
    kinds: list[str] = []

    def cleaned_messages() -> list[Message]:
        # Each message is read as the reply to the one before it: a PIN given alone answers a question.
        return [gated(message, kinds, messages[index - 1].content if index else None)
                for index, message in enumerate(messages)]

    cleaned = await gated_off_loop(deps, cleaned_messages, sum(message_chars(m) for m in messages))
    name = vault_name(key_id, session_id)
    vault = await _registered(deps, key_id, name)
    model = EmbeddingModel(deps.embedder.model_id, deps.embedder.dimension)
    # The vault counts the messages it takes (a batch sent again is counted once), into this note.
    note = UsageNote(deps.clock(), {}) if counted else None
    state = await vault.append(cleaned, model, note)
    embedded = await embed_jobs(deps, vault, state.to_embed, counted)
    if state.accepted < len(cleaned) and embedded == len(state.to_embed):
        # Messages the vault held already: a batch sent again, perhaps after a crash that came
        # between its first store and that store's embedding.
        await _embed_backlog(deps, vault, max(len(messages), BACKLOG_PER_WRITE))
    return StoreResult(
        rows_stored=sum(1 for r in state.rows if r.kind == "message"),
        chunks_stored=sum(1 for r in state.rows if r.kind == "chunk"),
        tokens_buffered=state.buffered_tokens,
        messages_accepted=state.accepted,
        updated_at=deps.clock(),
        redactions=tuple(dict.fromkeys(kinds)),
        mirrored=await _sync(deps, key_id, name),
    )


# Rows stored without a vector (a crash between a store and its embedding, the model down then)
# that a batch sent again embeds after its own: at least these many, or as many as it brought. A
# client sending a batch again after a crash so gets the vectors its first try did not.
BACKLOG_PER_WRITE = 64


async def _embed_backlog(deps: Deps, vault: VaultClient, most: int) -> None:
    try:
        jobs = await vault.unembedded(most)
    except Exception as exc:  # the nightly run embeds them
        log.warning("could not list rows without a vector: %s", type(exc).__name__)
        return
    if jobs:
        await embed_jobs(deps, vault, jobs)


def message_chars(message: Message) -> int:
    """How much text the gate reads in ``message``."""
    return len(message.content) + len(message.model or "") + len(message.metadata or "")


def gated(message: Message, kinds: list[str], asked: str | None = None) -> Message:
    """``message`` as it may be stored: every text of it through the secret gate (its content, its
    model, its metadata), each kind of secret found added to ``kinds``; its content as the reply
    to ``asked``, the message said before it, when there is one. Its id was refused by its parser
    if it held one (``Identifier``)."""
    content = redact(message.content, asked)
    model = redact(message.model) if message.model else None
    passed_when_written(content)
    metadata = redact_metadata(message.metadata) if message.metadata is not None else None
    for gate in (content, model, metadata):
        if gate is not None:
            kinds.extend(kind for kind in gate.kinds if kind not in kinds)
    return replace(message, content=content.text, model=model.text if model else message.model,
                   metadata=metadata.text if metadata else None)


async def _registered(deps: Deps, key_id: str, name: str) -> VaultClient:
    # A session id reaching here passed the secret gate where it was parsed (``check_stored_id``);
    # names read back from the database are not judged again, so a vault named before the gate
    # changed can still be cleared, purged and flushed.
    try:
        await MirrorStore(deps.db).register(key_id, name, deps.clock())
    except MemvaultError:
        raise
    except Exception as exc:
        raise StorageUnavailable("the memory store could not register this vault; nothing was written") from exc
    return deps.vaults.vault(name)


async def _sync(deps: Deps, key_id: str, name: str) -> bool:
    """Mirror what the vault logged: awaited, or handed to the background where the platform
    finishes work after the response. Whether the mirror is known to be up to date."""

    async def run() -> None:
        await sync_mirror(deps, key_id, name)

    if not deps.sync_mirror_inline:
        deps.background.run(run)
        return False
    try:
        await run()
    except Exception as exc:  # the vault holds the data and the log; the next write or run heals the mirror
        log.warning("mirror sync failed for one vault: %s", type(exc).__name__)
        return False
    return True


async def _vaults_named(deps: Deps, key_id: str, session_id: str | None) -> list[str]:
    """The vaults a clear or forget reaches: the session's own if anything was ever written to it
    (clearing or forgetting in a new session id creates and opens no vault), else every vault of
    the key."""
    mirror = MirrorStore(deps.db)
    if session_id is None:
        return await mirror.vaults_of(key_id)
    name = vault_name(key_id, session_id)
    try:
        written = await mirror.registered(key_id, name)
    except Exception as exc:  # the registry is down: the vault itself still answers
        log.warning("vault registry unavailable: %s", type(exc).__name__)
        written = True
    return [name] if written else []


async def clear_memory(deps: Deps, key_id: str, session_id: str | None = None, reset: bool = False) -> list[str]:
    """Clear one session vault, or (without ``session_id``) every vault of the key; the mirror
    follows from the vaults' logs. Returns the vaults cleared."""
    # The journal first: its rows are marked cleared, so a turn being stored as this runs (from the
    # row, or from its process's memory) either reached the vault before it is cleared, or is taken
    # out again by its settling, which reads its row once it is stored.
    await journal.clear_turns(deps.db, key_id, session_id)
    names = await _vaults_named(deps, key_id, session_id)
    for name in names:
        vault = await _registered(deps, key_id, name)
        await vault.clear(reset)
        await _sync(deps, key_id, name)
    await ReceiptStore(deps.db).clear(key_id, session_id)
    return names


async def forget(deps: Deps, key_id: str, ids: Sequence[str], session_id: str | None = None) -> dict[str, list[str]]:
    """Forget messages by id (the caller's id, or the one memvault assigned) in one session vault,
    or without ``session_id`` in every vault of the key: their rows, pending entries, the chunks and
    overlaps holding their text, and their vectors and keyword entries, in the vault and the mirror."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    if not wanted:
        raise InvalidInput("ids must name at least one message")
    # A routed turn not yet stored has its row in the journal, holding its text or not: forgetting
    # marks it there first, so that a turn being stored as this runs either is in the vault by the
    # time the vault forgets, or is forgotten again by its settling, which reads its row once it is
    # stored.
    found = await journal.forget_turns(deps.db, key_id, wanted, session_id)
    names = await _vaults_named(deps, key_id, session_id)
    for name in names:
        vault = await _registered(deps, key_id, name)
        result = await vault.forget(wanted)
        await embed_jobs(deps, vault, result.state.to_embed)
        await _sync(deps, key_id, name)
        found.update(result.forgotten)
    # Receipts name messages by id: an id asked for, or found as another's alias, leaves them too.
    await ReceiptStore(deps.db).forget(key_id, sorted({*wanted, *found}), session_id, sorted(found), deps.clock())
    return {"forgotten": [i for i in wanted if i in found], "not_found": [i for i in wanted if i not in found]}


async def purge_old_memory(deps: Deps, key_id: str, older_than: float) -> int:
    """Delete rows (and pending messages) older than ``older_than`` from every vault of the key; the
    mirror follows from the vaults' logs. Returns the number of rows deleted from the vaults."""
    removed = 0
    for name in await MirrorStore(deps.db).vaults_of(key_id):
        removed += await purge_vault(deps, key_id, name, older_than)
    await ReceiptStore(deps.db).delete_before(older_than, key_id)
    return removed


async def purge_vault(deps: Deps, key_id: str, name: str, older_than: float) -> int:
    """``purge_old_memory`` for one vault (the nightly run goes vault by vault, so it can stop
    between any two)."""
    vault = await _registered(deps, key_id, name)
    removed = len(await vault.delete_older_than(older_than))
    await _sync(deps, key_id, name)
    return removed


async def flush_pending(deps: Deps, key_id: str, session_id: str | None = None) -> StoreResult:
    """Turn a vault's pending buffer into a chunk now, however short (used for idle buffers)."""
    name = vault_name(key_id, session_id)
    vault = await _registered(deps, key_id, name)
    state: AppendResult = await vault.flush()
    await embed_jobs(deps, vault, state.to_embed)
    return StoreResult(
        rows_stored=sum(1 for r in state.rows if r.kind == "message"),
        chunks_stored=sum(1 for r in state.rows if r.kind == "chunk"),
        tokens_buffered=state.buffered_tokens,
        messages_accepted=0,
        updated_at=deps.clock(),
        mirrored=await _sync(deps, key_id, name),
    )


async def reconcile_vault(
    deps: Deps, key_id: str, session_id: str | None = None, embed_limit: int = 500
) -> dict[str, int]:
    """The nightly check of one vault: embed rows and pending messages stored without a vector,
    apply the log to the mirror, and rebuild the mirror if its row count still differs from the vault's."""
    name = vault_name(key_id, session_id)
    vault = deps.vaults.vault(name)
    jobs = await vault.unembedded(embed_limit)
    embedded = 0
    if jobs:
        embedded = await attach_vectors(deps, vault, jobs, await deps.embedder.embed([job.text for job in jobs]))
    outcome = await sync_mirror(deps, key_id, name)
    rebuilt = outcome.rebuilt
    stats, counts = await vault.stats(), await MirrorStore(deps.db).counts(key_id, name)
    if stats.messages + stats.chunks != counts["rows"] or stats.buffered_tokens != counts["buffered_tokens"]:
        await rebuild_mirror(deps, key_id, name)
        rebuilt = True
    return {"embedded": embedded, "applied": outcome.applied, "rebuilt": int(rebuilt)}

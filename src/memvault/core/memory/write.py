"""The only functions that write conversation memory. The vault is the source of truth; the mirror
is written here and nowhere else, right after the vault, so the two never drift by design."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidInput, StorageUnavailable
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.names import session_of, vault_name
from memvault.core.models import AppendResult, MemoryRow, Message, StoreResult
from memvault.core.ports import VaultClient
from memvault.core.redaction import redact

log = logging.getLogger(__name__)
REMIRROR_PAGE = 200


async def store_conversation(
    deps: Deps, key_id: str, messages: Sequence[Message], session_id: str | None = None
) -> StoreResult:
    """Store messages (from ``messages.message_from``) in order into the key's core vault (or its
    session vault), then mirror them."""
    cleaned: list[Message] = []
    kinds: list[str] = []
    for message in messages:
        redaction = redact(message.content)
        kinds.extend(redaction.kinds)
        cleaned.append(replace(message, content=redaction.text) if redaction.kinds else message)
    name = vault_name(key_id, session_id)
    vault = deps.vaults.vault(name)
    await _check_dimension(deps, vault)
    result = await _embed_and_mirror(deps, key_id, name, vault, await vault.append(cleaned))
    return replace(result, redactions=tuple(dict.fromkeys(kinds)))


async def _embed_and_mirror(deps: Deps, key_id: str, name: str, vault: VaultClient, state: AppendResult) -> StoreResult:
    """Finish a vault write: embed the rows it created, then mirror them with the vault's buffer."""
    rows = await _embed_rows(deps, vault, state.rows)
    mirrored = await _mirror(deps, key_id, name, rows, state)
    return StoreResult(
        rows_stored=sum(1 for r in rows if r.kind == "message"),
        chunks_stored=sum(1 for r in rows if r.kind == "chunk"),
        tokens_buffered=state.buffered_tokens,
        messages_accepted=state.accepted,
        mirrored=mirrored,
    )


async def _check_dimension(deps: Deps, vault: VaultClient) -> None:
    """Refuse before writing anything when the vault holds vectors of another dimension."""
    stored = (await vault.stats()).dimension
    if stored is not None and stored != deps.embedder.dimension:
        raise Conflict(
            f"this memory holds {stored}-d embeddings and the embedder makes {deps.embedder.dimension}-d ones; "
            "clear it with reset=true to switch"
        )


async def _embed_rows(deps: Deps, vault: VaultClient, rows: Sequence[MemoryRow]) -> list[MemoryRow]:
    """Embed new rows; on failure they stay stored, found by keyword, and the nightly cron embeds them."""
    embedded: list[MemoryRow] = []
    batch_size = max(1, deps.settings.embed_batch)
    for start in range(0, len(rows), batch_size):
        batch = rows[start : start + batch_size]
        try:
            vectors = await deps.embedder.embed([row.text for row in batch])
            await vault.attach_embeddings(
                deps.embedder.model_id, {r.id: v for r, v in zip(batch, vectors, strict=True)}
            )
        except InvalidInput:
            raise
        except Exception as exc:
            log.warning("embedding failed, rows kept for the nightly re-embed: %s", type(exc).__name__)
            embedded.extend(batch)
            continue
        embedded.extend(replace(r, embedding=tuple(v)) for r, v in zip(batch, vectors, strict=True))
    return embedded


async def _mirror(deps: Deps, key_id: str, name: str, rows: Sequence[MemoryRow], state: AppendResult) -> bool:
    try:
        await MirrorStore(deps.db).write(key_id, name, rows, deps.clock(), state)
    except Exception as exc:  # the vault holds the data; the nightly reconcile re-mirrors it
        log.warning("mirror write failed for one vault: %s", type(exc).__name__)
        return False
    return True


async def clear_memory(deps: Deps, key_id: str, session_id: str | None = None, reset: bool = False) -> list[str]:
    """Clear one session vault, or (without ``session_id``) every vault of the key, with their
    mirror rows and mirrored buffers. Returns the vaults cleared."""
    mirror = MirrorStore(deps.db)
    if session_id is not None:
        names = [vault_name(key_id, session_id)]
    else:
        names = await mirror.vaults_of(key_id)
    for name in names:
        await deps.vaults.vault(name).clear(reset)
        await mirror.clear(key_id, name)
    return names


async def forget(deps: Deps, key_id: str, ids: Sequence[str], session_id: str | None = None) -> dict[str, list[str]]:
    """Forget messages by id (the caller's id, or the one memvault assigned) in one session vault,
    or without ``session_id`` in every vault of the key: their rows, pending entries, the chunks and
    overlaps holding their text, and their vectors and keyword entries, in the vault and the mirror."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    if not wanted:
        raise InvalidInput("ids must name at least one message")
    mirror = MirrorStore(deps.db)
    names = [vault_name(key_id, session_id)] if session_id is not None else await mirror.vaults_of(key_id)
    found: set[str] = set()
    for name in names:
        vault = deps.vaults.vault(name)
        result = await vault.forget(wanted)
        embedded = replace(result.state, rows=tuple(await _embed_rows(deps, vault, result.state.rows)))
        try:
            await mirror.forget(key_id, name, wanted, replace(result, state=embedded), deps.clock())
        except Exception as exc:
            log.warning("mirror forget failed for one vault: %s", type(exc).__name__)
            raise StorageUnavailable("the vault forgot these messages but its mirror copy could not be updated; retry") from exc
        found.update(result.forgotten)
    return {"forgotten": [i for i in wanted if i in found], "not_found": [i for i in wanted if i not in found]}


async def purge_old_memory(deps: Deps, key_id: str, older_than: float) -> int:
    """Delete rows (and pending messages) older than ``older_than`` from every vault of the key and
    from the mirror together. Returns the number of rows deleted from the vaults."""
    mirror = MirrorStore(deps.db)
    removed = 0
    for name in await mirror.vaults_of(key_id):
        vault = deps.vaults.vault(name)
        removed += len(await vault.delete_older_than(older_than))
        await mirror.delete_older_than(key_id, name, older_than)
        await mirror.write(key_id, name, [], deps.clock(), await vault.append([]))
    return removed


async def flush_pending(deps: Deps, key_id: str, session_id: str | None = None) -> StoreResult:
    """Turn a vault's pending buffer into a chunk now, however short (used for idle buffers)."""
    name = vault_name(key_id, session_id)
    vault = deps.vaults.vault(name)
    return await _embed_and_mirror(deps, key_id, name, vault, await vault.flush())


async def flush_idle_buffers(deps: Deps, key_id: str, idle_before: float) -> list[StoreResult]:
    """Flush every vault of the key whose pending buffer has not been written to since ``idle_before``."""
    results = []
    for name in await MirrorStore(deps.db).idle_buffers(key_id, idle_before):
        results.append(await flush_pending(deps, key_id, session_of(name)))
    return results


async def reconcile_vault(
    deps: Deps, key_id: str, session_id: str | None = None, embed_limit: int = 500
) -> dict[str, int]:
    """Embed rows stored without a vector, and copy into the mirror any vault row it lacks."""
    name = vault_name(key_id, session_id)
    vault = deps.vaults.vault(name)
    mirror = MirrorStore(deps.db)
    jobs = await vault.unembedded(embed_limit)
    embedded = 0
    if jobs:
        vectors = await deps.embedder.embed([job.text for job in jobs])
        embeddings = {job.id: v for job, v in zip(jobs, vectors, strict=True)}
        embedded = await vault.attach_embeddings(deps.embedder.model_id, embeddings)
        await mirror.attach_embeddings(key_id, name, embeddings)
    remirrored = 0
    after: str | None = None
    while page := await vault.rows(after, REMIRROR_PAGE):
        known = await mirror.known_ids(key_id, name, [r.id for r in page])
        missing = [r for r in page if r.id not in known]
        if missing:
            await mirror.write(key_id, name, missing, deps.clock(), None)
            remirrored += len(missing)
        after = page[-1].id
    await mirror.write(key_id, name, [], deps.clock(), await vault.append([]))
    return {"embedded": embedded, "remirrored": remirrored}

"""The key store: every secret memvault issues, one row each in ``memory_keys``. A row's ``kind``
says what it opens: a memory key (``mk_…``) names whose conversation memory a request reads and
writes, and may be granted brain scopes (read, and optionally write) in the same ``scopes`` and
``writer`` columns; a brain credential (``bt_…``) carries the brain scopes it may read and whether
it may write. Only a hash of each secret is stored; a revoked or unknown secret authenticates nothing.
Every lookup, of either kind, goes through ``active_row``. A lookup that is given the time notes
it as the secret's last use, at most once a ``USE_RESOLUTION_SECONDS``, so authenticating costs
no write on most requests."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from memvault.core.errors import InvalidField, InvalidInput, NotFound, Unauthorized
from memvault.core.ports import Database
from memvault.core.read_cache import ReadCache

PREFIX = "mk_"
BRAIN_PREFIX = "bt_"
KEY_NAMESPACE = "memory-key"
MAX_LABEL = 200
Kind = Literal["memory", "brain"]
COLUMNS = ("id, label, created_at, revoked_at, keep_archive, kind, scopes, writer, last_used_at, "
           "requests_per_minute, provider_tokens_per_day, memory_tokens_per_day")
LIMIT_COLUMNS = ("requests_per_minute", "provider_tokens_per_day", "memory_tokens_per_day")
USE_RESOLUTION_SECONDS = 60.0
Statement = tuple[str, Sequence[Any]]


@dataclass(frozen=True)
class MemoryKey:
    id: str
    label: str
    created_at: float
    revoked_at: float | None
    keep_archive: bool
    last_used_at: float | None = None
    # The brain scopes the key was granted (as stored; ``core/answers/grants.py`` keeps only those
    # the deployment still has), and whether it may write facts to them.
    brain_scopes: tuple[str, ...] = ()
    brain_writer: bool = False
    # Its limits (``core/usage/limits.py``); None: none.
    requests_per_minute: int | None = None
    provider_tokens_per_day: int | None = None
    memory_tokens_per_day: int | None = None


@dataclass(frozen=True)
class BrainKey:
    """A brain credential as the store holds it. Its scopes are what it was granted; ``auth_of``
    keeps only those the deployment still has."""

    id: str
    name: str
    scopes: tuple[str, ...]
    writer: bool
    created_at: float
    revoked_at: float | None
    last_used_at: float | None = None


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _memory_key(row: dict[str, Any]) -> MemoryKey:
    scopes = _scopes(row)
    return MemoryKey(id=str(row["id"]), label=str(row["label"]), created_at=float(row["created_at"]),
                     revoked_at=_revoked(row), keep_archive=bool(row.get("keep_archive")),
                     last_used_at=_moment(row, "last_used_at"), brain_scopes=scopes,
                     brain_writer=bool(scopes) and bool(row.get("writer")),
                     **{column: _whole(row, column) for column in LIMIT_COLUMNS})


def _whole(row: dict[str, Any], column: str) -> int | None:
    value = row.get(column)
    return None if value is None else int(value)


def _brain_key(row: dict[str, Any]) -> BrainKey:
    return BrainKey(id=str(row["id"]), name=str(row["label"]) or str(row["id"]), scopes=_scopes(row),
                    writer=bool(row["writer"]), created_at=float(row["created_at"]), revoked_at=_revoked(row),
                    last_used_at=_moment(row, "last_used_at"))


def _scopes(row: dict[str, Any]) -> tuple[str, ...]:
    try:
        scopes = json.loads(str(row.get("scopes") or "[]"))
    except ValueError:
        scopes = []  # a row edited by hand into nonsense grants nothing
    return tuple(str(s) for s in scopes) if isinstance(scopes, list) else ()


def _revoked(row: dict[str, Any]) -> float | None:
    return _moment(row, "revoked_at")


def _moment(row: dict[str, Any], column: str) -> float | None:
    value = row.get(column)
    return None if value is None else float(value)


async def _note_use(db: Database, row: dict[str, Any], now: float | None) -> None:
    last = _moment(row, "last_used_at")
    if now is None or (last is not None and now - last < USE_RESOLUTION_SECONDS):
        return
    await db.execute("UPDATE memory_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
                     (now, row["id"], now))


async def _insert(db: Database, kind: Kind, prefix: str, label: str, now: float, keep_archive: bool = False,
                  scopes: tuple[str, ...] = (), writer: bool = False,
                  also: Callable[[str], Sequence[Statement]] | None = None) -> tuple[str, str]:
    """A new row of ``kind``; returns its id and the secret, which is never stored. ``also`` gives
    the statements (an event log entry) that land in the same batch, from the new row's id."""
    if len(label) > MAX_LABEL:
        raise InvalidInput(f"label is longer than {MAX_LABEL} characters")
    secret = prefix + secrets.token_urlsafe(32)
    key_id = "key_" + secrets.token_hex(8)
    insert: Statement = (
        "INSERT INTO memory_keys (id, key_hash, label, keep_archive, created_at, kind, scopes, writer)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (key_id, hash_key(secret), label, int(keep_archive), now, kind, json.dumps(list(scopes)), int(writer)),
    )
    await db.batch([insert, *(also(key_id) if also else ())])
    return key_id, secret


async def active_row(db: Database, kind: Kind, column: Literal["id", "key_hash"], value: str) -> dict[str, Any] | None:
    """The one lookup of the store: the unrevoked row of ``kind`` whose ``column`` is ``value``.
    Looked up by the secret's sha256, never the secret: the index walk's timing can tell at most
    how far a guess's hash matches a stored one, which says nothing about any secret."""
    found = await db.query(f"SELECT {COLUMNS} FROM memory_keys WHERE {column} = ? AND kind = ?", (value, kind))
    if not found or found[0]["revoked_at"] is not None:
        return None
    return found[0]


async def create_key(db: Database, label: str, now: float, keep_archive: bool = False,
                     also: Callable[[str], Sequence[Statement]] | None = None, brain_scopes: tuple[str, ...] = (),
                     brain_writer: bool = False) -> tuple[MemoryKey, str]:
    """Create a memory key, granted ``brain_scopes`` (already checked against the deployment's) and
    with ``brain_writer`` the right to write facts to them; the secret is returned once and never
    stored."""
    if brain_writer and not brain_scopes:
        raise InvalidField("brain_writer needs brain_scopes to write to")
    key_id, secret = await _insert(db, "memory", PREFIX, label, now, keep_archive=keep_archive, scopes=brain_scopes,
                                   writer=brain_writer, also=also)
    key = MemoryKey(id=key_id, label=label, created_at=now, revoked_at=None, keep_archive=keep_archive,
                    brain_scopes=brain_scopes, brain_writer=brain_writer)
    return key, secret


def is_memory_key(token: str) -> bool:
    """Whether ``token`` has a memory key's form (``mk_…``); the store says whether it is one."""
    return token.startswith(PREFIX)


async def authenticate(db: Database, secret: str | None, reads: ReadCache | None = None,
                       now: float | None = None) -> MemoryKey:
    """The active memory key ``secret`` names. With ``reads``, a lookup that found one is kept in
    the read cache (an unknown or revoked key is looked up every time); with ``now``, a lookup in
    the database notes the key's use."""
    if not secret or not is_memory_key(secret):
        raise Unauthorized("a memory key (mk_…) is required")
    return await _lookup(db, "key_hash", hash_key(secret), reads, now)


async def key_by_id(db: Database, key_id: object, reads: ReadCache | None = None, now: float | None = None) -> MemoryKey:
    """An active memory key named by its id, for a caller the platform vouches for (a service
    binding whose props name the key); an unknown or revoked id, or a brain credential's,
    authenticates nothing."""
    if not isinstance(key_id, str) or not key_id:
        raise Unauthorized("a memory key id is required")
    return await _lookup(db, "id", key_id, reads, now)


async def _lookup(db: Database, column: Literal["id", "key_hash"], value: str, reads: ReadCache | None,
                  now: float | None) -> MemoryKey:
    async def from_database() -> MemoryKey:
        row = await active_row(db, "memory", column, value)
        if row is None:
            raise Unauthorized("unknown or revoked memory key")
        await _note_use(db, row, now)
        return _memory_key(row)

    if reads is None:
        return await from_database()
    return await reads.read(f"{KEY_NAMESPACE}:{column}", [value], from_database,
                            lambda key: json.dumps(asdict(key)), _cached_key)


def _cached_key(raw: str) -> MemoryKey:
    fields = json.loads(raw)
    return MemoryKey(**{**fields, "brain_scopes": tuple(fields.get("brain_scopes") or ())})


async def list_keys(db: Database) -> list[MemoryKey]:
    found = await db.query(f"SELECT {COLUMNS} FROM memory_keys WHERE kind = 'memory' ORDER BY created_at")
    return [_memory_key(row) for row in found]


async def revoke_key(db: Database, key_id: str, now: float, reads: ReadCache | None = None,
                     also: Sequence[Statement] = ()) -> None:
    """Revoke a memory key; with ``reads``, its cached lookups are dropped too, so this cache
    refuses it at once (any other cache stops serving it within its TTL)."""
    await _revoke(db, "memory", key_id, now, also)
    if reads is not None:
        found = await db.query("SELECT key_hash FROM memory_keys WHERE id = ?", (key_id,))
        await reads.forget(f"{KEY_NAMESPACE}:id", [key_id])
        await reads.forget(f"{KEY_NAMESPACE}:key_hash", [str(found[0]["key_hash"])])


async def active_key(db: Database, key_id: str) -> MemoryKey:
    """The active memory key with id ``key_id``, for the admin (``NotFound`` if none)."""
    row = await active_row(db, "memory", "id", key_id)
    if row is None:
        raise NotFound(f"no active key {key_id}")
    return _memory_key(row)


async def set_limits(db: Database, key_id: str, limits: dict[str, int | None], reads: ReadCache | None = None,
                     also: Sequence[Statement] = ()) -> MemoryKey:
    """Set an active memory key's limits (``LIMIT_COLUMNS``; None removes one); with ``reads``,
    its cached lookups are dropped, so this cache applies them at once (any other within its TTL)."""
    await active_key(db, key_id)
    assignments = ", ".join(f"{column} = ?" for column in LIMIT_COLUMNS)
    update = f"UPDATE memory_keys SET {assignments} WHERE id = ? AND kind = 'memory'"
    await db.batch([*also, (update, (*(limits.get(column) for column in LIMIT_COLUMNS), key_id))])
    if reads is not None:
        await reads.forget(f"{KEY_NAMESPACE}:id", [key_id])
        found = await db.query("SELECT key_hash FROM memory_keys WHERE id = ?", (key_id,))
        await reads.forget(f"{KEY_NAMESPACE}:key_hash", [str(found[0]["key_hash"])])
    return await active_key(db, key_id)


async def _revoke(db: Database, kind: Kind, key_id: str, now: float, also: Sequence[Statement]) -> None:
    """``also`` (an event log entry) lands in the same batch, before the update: a statement that
    must hold only for a row revoked by this call checks that the row is still active."""
    if await active_row(db, kind, "id", key_id) is None:
        raise NotFound(f"no active {'key' if kind == 'memory' else 'brain credential'} {key_id}")
    update = "UPDATE memory_keys SET revoked_at = ? WHERE id = ? AND kind = ? AND revoked_at IS NULL"
    await db.batch([*also, (update, (now, key_id, kind))])


async def create_brain_key(
    db: Database, name: str, scopes: tuple[str, ...], writer: bool, now: float,
    also: Callable[[str], Sequence[Statement]] | None = None,
) -> tuple[BrainKey, str]:
    """Store a brain credential (its scopes already checked against the deployment's); the secret
    is returned once and never stored."""
    key_id, secret = await _insert(db, "brain", BRAIN_PREFIX, name, now, scopes=scopes, writer=writer, also=also)
    return BrainKey(id=key_id, name=name or key_id, scopes=scopes, writer=writer, created_at=now, revoked_at=None), secret


async def brain_key(db: Database, column: Literal["id", "key_hash"], value: str,
                    now: float | None = None) -> BrainKey | None:
    """The active brain credential whose id or secret hash is ``value``; None when unknown or
    revoked. With ``now``, the lookup notes the credential's use."""
    row = await active_row(db, "brain", column, value)
    if row is None:
        return None
    await _note_use(db, row, now)
    return _brain_key(row)


async def list_brain_keys(db: Database) -> list[BrainKey]:
    found = await db.query(f"SELECT {COLUMNS} FROM memory_keys WHERE kind = 'brain' ORDER BY created_at")
    return [_brain_key(row) for row in found]


async def revoke_brain_key(db: Database, key_id: str, now: float, also: Sequence[Statement] = ()) -> None:
    """Revoke a brain credential: the next call that presents it is refused, in every process,
    since credentials are looked up on each call and never cached."""
    await _revoke(db, "brain", key_id, now, also)

"""Memory keys: ``mk_…`` secrets that name whose memory a request reads and writes. Only a hash
of each key is stored; a revoked or unknown key authenticates nothing."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from memvault.core.errors import InvalidInput, NotFound, Unauthorized
from memvault.core.ports import Database
from memvault.core.read_cache import ReadCache

PREFIX = "mk_"
KEY_NAMESPACE = "memory-key"


@dataclass(frozen=True)
class MemoryKey:
    id: str
    label: str
    created_at: float
    revoked_at: float | None
    keep_archive: bool


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _from_row(row: dict[str, Any]) -> MemoryKey:
    revoked = row.get("revoked_at")
    return MemoryKey(
        id=str(row["id"]),
        label=str(row["label"]),
        created_at=float(row["created_at"]),
        revoked_at=None if revoked is None else float(revoked),
        keep_archive=bool(row.get("keep_archive")),
    )


async def create_key(db: Database, label: str, now: float, keep_archive: bool = False) -> tuple[MemoryKey, str]:
    """Create a key; the secret is returned once and never stored."""
    if len(label) > 200:
        raise InvalidInput("label is longer than 200 characters")
    secret = PREFIX + secrets.token_urlsafe(32)
    key = MemoryKey(id="key_" + secrets.token_hex(8), label=label, created_at=now, revoked_at=None, keep_archive=keep_archive)
    await db.execute(
        "INSERT INTO memory_keys (id, key_hash, label, keep_archive, created_at) VALUES (?, ?, ?, ?, ?)",
        (key.id, hash_key(secret), label, int(keep_archive), now),
    )
    return key, secret


async def authenticate(db: Database, secret: str | None, reads: ReadCache | None = None) -> MemoryKey:
    """The active key ``secret`` names. With ``reads``, a lookup that found one is kept in the read
    cache (an unknown or revoked key is looked up every time)."""
    if not secret or not secret.startswith(PREFIX):
        raise Unauthorized("a memory key (mk_…) is required")
    return await _lookup(db, "key_hash", hash_key(secret), reads)


async def key_by_id(db: Database, key_id: object, reads: ReadCache | None = None) -> MemoryKey:
    """An active key named by its id, for a caller the platform vouches for (a service binding
    whose props name the key); an unknown or revoked id authenticates nothing."""
    if not isinstance(key_id, str) or not key_id:
        raise Unauthorized("a memory key id is required")
    return await _lookup(db, "id", key_id, reads)


async def _lookup(db: Database, column: str, value: str, reads: ReadCache | None) -> MemoryKey:
    async def from_database() -> MemoryKey:
        found = await db.query(
            f"SELECT id, label, created_at, revoked_at, keep_archive FROM memory_keys WHERE {column} = ?", (value,)
        )
        if not found or found[0]["revoked_at"] is not None:
            raise Unauthorized("unknown or revoked memory key")
        return _from_row(found[0])

    if reads is None:
        return await from_database()
    return await reads.read(f"{KEY_NAMESPACE}:{column}", [value], from_database,
                            lambda key: json.dumps(asdict(key)), lambda raw: MemoryKey(**json.loads(raw)))


async def list_keys(db: Database) -> list[MemoryKey]:
    found = await db.query("SELECT id, label, created_at, revoked_at, keep_archive FROM memory_keys ORDER BY created_at")
    return [_from_row(row) for row in found]


async def revoke_key(db: Database, key_id: str, now: float, reads: ReadCache | None = None) -> None:
    """Revoke a key; with ``reads``, its cached lookups are dropped too, so this cache refuses it
    at once (any other cache stops serving it within its TTL)."""
    changed = await db.execute(
        "UPDATE memory_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, key_id)
    )
    if not changed:
        raise NotFound(f"no active key {key_id}")
    if reads is not None:
        found = await db.query("SELECT key_hash FROM memory_keys WHERE id = ?", (key_id,))
        await reads.forget(f"{KEY_NAMESPACE}:id", [key_id])
        await reads.forget(f"{KEY_NAMESPACE}:key_hash", [str(found[0]["key_hash"])])

"""Memory keys: ``mk_…`` secrets that name whose memory a request reads and writes. Only a hash
of each key is stored; a revoked or unknown key authenticates nothing."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from memvault.core.errors import InvalidInput, NotFound, Unauthorized
from memvault.core.ports import Database

PREFIX = "mk_"


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


async def authenticate(db: Database, secret: str | None) -> MemoryKey:
    if not secret or not secret.startswith(PREFIX):
        raise Unauthorized("a memory key (mk_…) is required")
    found = await db.query(
        "SELECT id, label, created_at, revoked_at, keep_archive FROM memory_keys WHERE key_hash = ?", (hash_key(secret),)
    )
    if not found or found[0]["revoked_at"] is not None:
        raise Unauthorized("unknown or revoked memory key")
    return _from_row(found[0])


async def key_by_id(db: Database, key_id: object) -> MemoryKey:
    """An active key named by its id, for a caller the platform vouches for (a service binding
    whose props name the key); an unknown or revoked id authenticates nothing."""
    if not isinstance(key_id, str) or not key_id:
        raise Unauthorized("a memory key id is required")
    found = await db.query("SELECT id, label, created_at, revoked_at, keep_archive FROM memory_keys WHERE id = ?", (key_id,))
    if not found or found[0]["revoked_at"] is not None:
        raise Unauthorized("unknown or revoked memory key")
    return _from_row(found[0])


async def list_keys(db: Database) -> list[MemoryKey]:
    found = await db.query("SELECT id, label, created_at, revoked_at, keep_archive FROM memory_keys ORDER BY created_at")
    return [_from_row(row) for row in found]


async def revoke_key(db: Database, key_id: str, now: float) -> None:
    changed = await db.execute(
        "UPDATE memory_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, key_id)
    )
    if not changed:
        raise NotFound(f"no active key {key_id}")

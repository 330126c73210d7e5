"""`memvault keys`: memory keys, the credentials of conversation memory."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.shell import counted, data_dir_option, emit, emit_json, json_option, say, with_deps
from memvault.core.credentials import keys
from memvault.core.deps import Deps


@click.group("keys")
def keys_group() -> None:
    """Create, list and revoke memory keys (mk_…)."""


@keys_group.command("create")
@click.option("--label", default="", help="A name to tell the key apart by in `memvault keys list`.")
@click.option("--keep-archive", is_flag=True, help="Never purge this key's old memory (the nightly purge skips it).")
@json_option
@data_dir_option
def create(label: str, keep_archive: bool, as_json: bool, data_dir: Path | None) -> None:
    """Create a key and print it (shown once).

    Only the key's hash is stored; the key is printed on stdout, on its own line."""

    async def work(deps: Deps) -> None:
        key, secret = await keys.create_key(deps.db, label, deps.clock(), keep_archive=keep_archive)
        say(f"created key {key.id}" + (f" ({label})" if label else "") + ": it is shown once, keep it")
        if as_json:
            emit_json({"id": key.id, "label": key.label, "created_at": key.created_at,
                       "keep_archive": key.keep_archive, "key": secret})
        else:
            emit(secret)

    with_deps(data_dir, work, create=True)


@keys_group.command("list")
@json_option
@data_dir_option
def list_keys(as_json: bool, data_dir: Path | None) -> None:
    """List the keys, oldest first (never their secrets).

    One line per key: id, state and label, separated by tabs."""

    async def work(deps: Deps) -> None:
        found = await keys.list_keys(deps.db)
        if as_json:
            emit_json([{"id": k.id, "label": k.label, "state": _state(k), "created_at": k.created_at,
                        "revoked_at": k.revoked_at, "keep_archive": k.keep_archive} for k in found])
        else:
            for key in found:
                emit(f"{key.id}\t{_state(key)}\t{key.label}")
        active = sum(1 for k in found if k.revoked_at is None)
        say(f"{counted(len(found), 'key')}, {active} active")

    with_deps(data_dir, work)


@keys_group.command("revoke")
@click.argument("key_id")
@json_option
@data_dir_option
def revoke(key_id: str, as_json: bool, data_dir: Path | None) -> None:
    """Revoke a key by id.

    KEY_ID as `memvault keys list` shows it; the key is refused from then on."""

    async def work(deps: Deps) -> None:
        now = deps.clock()
        await keys.revoke_key(deps.db, key_id, now)
        # The server's read cache may still hold the key's lookup, for at most its TTL.
        say(f"revoked key {key_id}; a running server refuses it within {deps.settings.cache_ttl_seconds} s")
        if as_json:
            emit_json({"id": key_id, "revoked_at": now})

    with_deps(data_dir, work)


def _state(key: keys.MemoryKey) -> str:
    return "revoked" if key.revoked_at is not None else "active"

"""`memvault brain-token`: brain credentials stored in the data folder's key store."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.shell import counted, data_dir_option, emit, emit_json, json_option, say, with_deps
from memvault.core import brain
from memvault.core.credentials import keys
from memvault.core.deps import Deps


@click.group("brain-token")
def brain_tokens_group() -> None:
    """Create, list and revoke brain credentials (bt_…)."""


@brain_tokens_group.command("create")
@click.option("--scopes", required=True, help="Scopes it may read, separated by commas (from MEMVAULT_BRAIN_SCOPES).")
@click.option("--writer", is_flag=True, help="It may also write facts to those scopes.")
@click.option("--name", default="", help="A name to recognise it by (default: its id).")
@json_option
@data_dir_option
def create(scopes: str, writer: bool, name: str, as_json: bool, data_dir: Path | None) -> None:
    """Create a brain credential and print its token (shown once).

    Only the token's hash is stored, where the server and `memvault mcp` both read it; the token
    is printed on stdout, on its own line."""

    async def work(deps: Deps) -> None:
        stored, token = await brain.create_brain_token(deps, scopes.split(","), writer, name)
        say(f"created brain credential {stored.id} ({stored.name}: {_role(stored)} of {', '.join(stored.scopes)}):"
            " the token is shown once, keep it")
        if as_json:
            emit_json({**_described(stored), "token": token})
        else:
            emit(token)

    with_deps(data_dir, work, create=True)


@brain_tokens_group.command("list")
@json_option
@data_dir_option
def list_tokens(as_json: bool, data_dir: Path | None) -> None:
    """List the brain credentials, oldest first (never their tokens).

    One line per credential: id, state, name, reader or writer, and scopes, separated by tabs."""

    async def work(deps: Deps) -> None:
        found = await keys.list_brain_keys(deps.db)
        if as_json:
            emit_json([_described(stored) for stored in found])
        else:
            for stored in found:
                emit(f"{stored.id}\t{_state(stored)}\t{stored.name}\t{_role(stored)}\t{','.join(stored.scopes)}")
        active = sum(1 for stored in found if stored.revoked_at is None)
        say(f"{counted(len(found), 'brain credential')}, {active} active")

    with_deps(data_dir, work)


@brain_tokens_group.command("revoke")
@click.argument("key_id", metavar="ID")
@json_option
@data_dir_option
def revoke(key_id: str, as_json: bool, data_dir: Path | None) -> None:
    """Revoke a brain credential by id.

    ID as `memvault brain-token list` shows it; every process refuses it from its next call."""

    async def work(deps: Deps) -> None:
        now = deps.clock()
        await keys.revoke_brain_key(deps.db, key_id, now)
        say(f"revoked brain credential {key_id}")
        if as_json:
            emit_json({"id": key_id, "revoked_at": now})

    with_deps(data_dir, work)


def _role(stored: keys.BrainKey) -> str:
    return "writer" if stored.writer else "reader"


def _state(stored: keys.BrainKey) -> str:
    return "revoked" if stored.revoked_at is not None else "active"


def _described(stored: keys.BrainKey) -> dict[str, object]:
    return {"id": stored.id, "name": stored.name, "scopes": list(stored.scopes), "writer": stored.writer,
            "state": _state(stored), "created_at": stored.created_at, "revoked_at": stored.revoked_at}

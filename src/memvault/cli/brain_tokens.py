"""`memvault brain-token`: brain credentials in the key store of the data folder or (`--url`) of a
deployed memvault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memvault.cli.admin_calls import admin_call, url_option
from memvault.cli.shell import counted, data_dir_option, emit, emit_json, json_option, say
from memvault.core.admin import CREATE_CREDENTIAL, LIST_CREDENTIALS, REVOKE_CREDENTIAL


@click.group("brain-token")
def brain_tokens_group() -> None:
    """Create, list and revoke brain credentials (bt_…)."""


@brain_tokens_group.command("create")
@click.option("--scopes", required=True, help="Scopes it may read, separated by commas (from MEMVAULT_BRAIN_SCOPES).")
@click.option("--writer", is_flag=True, help="It may also write facts to those scopes.")
@click.option("--name", default="", help="A name to recognise it by (default: its id).")
@json_option
@url_option
@data_dir_option
def create(scopes: str, writer: bool, name: str, as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """Create a brain credential and print its token (shown once).

    Only the token's hash is stored, where the server and `memvault mcp` both read it; the token
    is printed on stdout, on its own line."""
    asked = [scope.strip() for scope in scopes.split(",")]
    made = admin_call(url, data_dir, CREATE_CREDENTIAL, {"scopes": asked, "writer": writer, "name": name}, create=True)
    say(f"created brain credential {made['id']} ({made['name']}: {_role(made)} of {', '.join(made['scopes'])}):"
        " the token is shown once, keep it")
    if as_json:
        emit_json(made)
    else:
        emit(made["token"])


@brain_tokens_group.command("list")
@json_option
@url_option
@data_dir_option
def list_tokens(as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """List the brain credentials, oldest first (never their tokens).

    One line per credential: id, state, name, reader or writer, and scopes, separated by tabs."""
    found = admin_call(url, data_dir, LIST_CREDENTIALS, {})["credentials"]
    if as_json:
        emit_json(found)
    else:
        for stored in found:
            emit(f"{stored['id']}\t{stored['state']}\t{stored['name']}\t{_role(stored)}\t{','.join(stored['scopes'])}")
    active = sum(1 for stored in found if stored["state"] == "active")
    say(f"{counted(len(found), 'brain credential')}, {active} active")


@brain_tokens_group.command("revoke")
@click.argument("key_id", metavar="ID")
@json_option
@url_option
@data_dir_option
def revoke(key_id: str, as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """Revoke a brain credential by id.

    ID as `memvault brain-token list` shows it; every process refuses it from its next call."""
    revoked = admin_call(url, data_dir, REVOKE_CREDENTIAL, {"id": key_id})
    say(f"revoked brain credential {key_id}")
    if as_json:
        emit_json(revoked)


def _role(stored: dict[str, Any]) -> str:
    return "writer" if stored["writer"] else "reader"

"""`memvault keys`: memory keys, the credentials of conversation memory, in the data folder or
(`--url`) on a deployed memvault."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.admin_calls import admin_call, url_option
from memvault.cli.provider_keys import provider_group
from memvault.cli.shell import counted, data_dir_option, emit, emit_json, json_option, say
from memvault.core.admin import CREATE_KEY, LIST_KEYS, REVOKE_KEY


@click.group("keys")
def keys_group() -> None:
    """Create, list and revoke memory keys (mk_…)."""


@keys_group.command("create")
@click.option("--label", default="", help="A name to tell the key apart by in `memvault keys list`.")
@click.option("--keep-archive", is_flag=True, help="Never purge this key's old memory (the nightly purge skips it).")
@click.option("--brain-scopes", default="", metavar="SCOPE[,SCOPE…]",
              help="Recall the brain's facts of these scopes beside conversation memory (search and the router).")
@click.option("--brain-writer", is_flag=True, help="The key may also write facts to its brain scopes.")
@json_option
@url_option
@data_dir_option
def create(label: str, keep_archive: bool, brain_scopes: str, brain_writer: bool, as_json: bool, url: str | None,
           data_dir: Path | None) -> None:
    """Create a key and print it (shown once).

    Only the key's hash is stored; the key is printed on stdout, on its own line."""
    data: dict[str, object] = {"label": label, "keep_archive": keep_archive, "brain_writer": brain_writer}
    if brain_scopes.strip():
        data["brain_scopes"] = [scope.strip() for scope in brain_scopes.split(",")]
    made = admin_call(url, data_dir, CREATE_KEY, data, create=True)
    granted = made.get("brain_scopes") or []
    grant = f", brain {'writer' if made.get('brain_writer') else 'reader'} of {','.join(granted)}" if granted else ""
    say(f"created key {made['id']}" + (f" ({label})" if label else "") + grant + ": it is shown once, keep it")
    if as_json:
        emit_json(made)
    else:
        emit(made["key"])


@keys_group.command("list")
@json_option
@url_option
@data_dir_option
def list_keys(as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """List the keys, oldest first (never their secrets).

    One line per key: id, state and label, and the brain grant of a key granted one (its scopes,
    with `+writer`), separated by tabs."""
    found = admin_call(url, data_dir, LIST_KEYS, {})["keys"]
    if as_json:
        emit_json(found)
    else:
        for key in found:
            grant = ",".join(key.get("brain_scopes") or []) + ("+writer" if key.get("brain_writer") else "")
            emit(f"{key['id']}\t{key['state']}\t{key['label']}" + (f"\t{grant}" if grant else ""))
    active = sum(1 for key in found if key["state"] == "active")
    say(f"{counted(len(found), 'key')}, {active} active")


@keys_group.command("revoke")
@click.argument("key_id")
@json_option
@url_option
@data_dir_option
def revoke(key_id: str, as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """Revoke a key by id.

    KEY_ID as `memvault keys list` shows it; the key is refused from then on."""
    revoked = admin_call(url, data_dir, REVOKE_KEY, {"id": key_id})
    # A local server looks a key up on every call (docs/settings.md), so the next call is refused.
    say(f"revoked key {key_id}; a server on this data folder refuses it from its next call"
        if url is None else f"revoked key {key_id}")
    if as_json:
        emit_json(revoked)


keys_group.add_command(provider_group)

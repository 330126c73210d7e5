"""`memvault keys provider`: the provider keys held for memory keys, in the data folder or (`--url`)
on a deployed memvault. A provider key is read from stdin or from an environment variable the
command is told the name of, never from the command line, where `ps` and shell history show it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from memvault.cli.admin_calls import admin_call, url_option
from memvault.cli.shell import CommandError, counted, data_dir_option, emit, emit_json, json_option, say
from memvault.core.admin import DELETE_PROVIDER_KEY, LIST_PROVIDER_KEYS, RESEAL_PROVIDER_KEYS, SET_PROVIDER_KEY
from memvault.core.credentials.provider_keys import PROVIDERS

provider_argument = click.argument("provider", type=click.Choice(PROVIDERS))


@click.group("provider")
def provider_group() -> None:
    """Provider keys (OpenAI, Anthropic, Gemini) held for a memory key, sealed at rest."""


def _read_secret(from_env: str | None) -> str:
    if from_env is not None:
        value = os.environ.get(from_env, "")
        if not value.strip():
            raise CommandError(f"the environment variable {from_env} is not set")
        return value.strip()
    if sys.stdin.isatty():
        return str(click.prompt("Provider key", hide_input=True, err=True)).strip()
    value = sys.stdin.read().strip()
    if not value:
        raise CommandError("no provider key on stdin: pipe it in, or name a variable holding it with --from-env")
    return value


@provider_group.command("set")
@click.argument("key_id")
@provider_argument
@click.option("--from-env", metavar="VARIABLE", default=None,
              help="Read the provider key from this environment variable instead of stdin.")
@json_option
@url_option
@data_dir_option
def set_key(key_id: str, provider: str, from_env: str | None, as_json: bool, url: str | None,
            data_dir: Path | None) -> None:
    """Store (or replace) KEY_ID's key for PROVIDER (openai, anthropic or gemini).

    The provider key is read from stdin (typed without echo at a terminal) or from --from-env's
    variable, never from an argument. It is stored sealed and never shown again."""
    secret = _read_secret(from_env)
    stored = admin_call(url, data_dir, SET_PROVIDER_KEY,
                        {"id": key_id, "provider": provider, "body": {"api_key": secret}})
    tail = f" (…{stored['last4']})" if stored["last4"] else ""
    say(f"stored the {provider} key{tail} of {key_id}")
    if as_json:
        emit_json(stored)


@provider_group.command("delete")
@click.argument("key_id")
@provider_argument
@json_option
@url_option
@data_dir_option
def delete_key(key_id: str, provider: str, as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """Delete KEY_ID's key for PROVIDER; its calls then need their own."""
    deleted = admin_call(url, data_dir, DELETE_PROVIDER_KEY, {"id": key_id, "provider": provider})
    say(f"deleted the {provider} key of {key_id}")
    if as_json:
        emit_json(deleted)


@provider_group.command("list")
@click.argument("key_id")
@json_option
@url_option
@data_dir_option
def list_keys(key_id: str, as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """List the providers KEY_ID holds a key for (never the keys).

    One line per provider: provider, when it was set (epoch seconds) and at most its last 4
    characters, separated by tabs."""
    found = admin_call(url, data_dir, LIST_PROVIDER_KEYS, {"id": key_id})["providers"]
    if as_json:
        emit_json(found)
    else:
        for stored in found:
            emit(f"{stored['provider']}\t{stored['created_at']:.0f}\t{stored['last4']}")
    say(f"{counted(len(found), 'provider key')} for {key_id}")


@provider_group.command("reseal")
@json_option
@url_option
@data_dir_option
def reseal(as_json: bool, url: str | None, data_dir: Path | None) -> None:
    """Seal every stored provider key again under the current MEMVAULT_PROVIDER_KEY_SECRET.

    Run after rotating the secret, with the earlier one in MEMVAULT_PROVIDER_KEY_OLD_SECRETS;
    once it is done the earlier secret can be dropped."""
    done = admin_call(url, data_dir, RESEAL_PROVIDER_KEYS, {})
    say(f"resealed {counted(done['resealed'], 'provider key')} under secret version {done['version']}")
    if as_json:
        emit_json(done)

"""`memvault import|export|search|forget|stats`: one key's conversation memory."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import click
from tqdm import tqdm

from memvault.cli.shell import (
    CommandError,
    authenticated,
    counted,
    data_dir_option,
    emit,
    emit_json,
    key_option,
    say,
    with_deps,
)
from memvault.core.answers import SEARCH
from memvault.core.deps import Deps
from memvault.core.errors import MemvaultError
from memvault.core.memory.operations import EXPORT, FORGET, STATS, perform
from memvault.core.memory.transfer import HeldMessage, held_from, store_held
from memvault.core.shapes import plain_object

IMPORT_BATCH = 200


@click.command("import")
@click.argument("file", type=click.File("rb"))
@click.option("--session", default=None, help="Store lines that name no vault in this session's vault (default: the core vault).")
@key_option
@data_dir_option
def import_messages(file: BinaryIO, session: str | None, key: str | None, data_dir: Path | None) -> None:
    """Store the messages of a JSONL file.

    FILE holds one message a line, or what `memvault export` wrote (`-` reads stdin). Every line
    is checked before anything is stored; importing the same file again stores nothing twice. The
    format: docs/cli.md."""
    name = getattr(file, "name", "-")
    say(f"reading {name}")
    lines = list(_json_lines(file, name))

    async def work(deps: Deps) -> None:
        owner = await authenticated(deps, key)
        now = deps.clock()
        try:
            held = [h for where, raw in lines if (h := held_from(raw, now, where, session)) is not None]
        except MemvaultError as exc:
            # "line 2.role must be …" names the field as a path; a person reads "line 2: role must be …".
            message = _LINE_FIELD.sub(r"\1: ", exc.message, count=1)
            raise CommandError(f"{name}: {message}; nothing was imported") from exc
        with tqdm(total=len(held), unit="msg", file=sys.stderr, disable=None) as progress:
            accepted = await store_held(deps, owner.id, held, IMPORT_BATCH, progress.update)
        emit_json({"messages_read": len(held), "messages_accepted": accepted})
        kept = len(held) - accepted
        say(f"imported {counted(accepted, 'new message')} of {len(held)} read into {_vaults(held)} of key {owner.id}"
            + (f" ({kept} held already, or repeating a text already held)" if kept else ""))
        aged = sum(1 for h in held if h.message.timestamp < now - deps.settings.long_term_window_days)
        if aged and not owner.keep_archive:
            say(f"warning: {counted(aged, 'message')} said more than {deps.settings.long_term_window_days / 86400:g} "
                "days ago (MEMVAULT_LONG_TERM_WINDOW_DAYS) will be purged by the next maintenance pass; a key created "
                "with --keep-archive keeps them")

    with_deps(data_dir, work)


_LINE_FIELD = re.compile(r"^(line \d+)\.")


def _json_lines(file: BinaryIO, name: str) -> Iterator[tuple[str, object]]:
    for number, raw in enumerate(file, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CommandError(f"{name} line {number}: not UTF-8 text; nothing was imported") from exc
        if not text.strip():
            continue
        try:
            yield f"line {number}", json.loads(text)
        except ValueError as exc:
            raise CommandError(f"{name} line {number}: not JSON ({exc}); nothing was imported") from exc


def _vaults(held: list[HeldMessage]) -> str:
    names = sorted({"core" if h.session_id is None else f"session {h.session_id}" for h in held})
    return ", ".join(names) if names else "no vault"


@click.command("export")
@key_option
@data_dir_option
def export(key: str | None, data_dir: Path | None) -> None:
    """Print everything a key holds as JSONL.

    Vault by vault: the chunks, then the messages in the order the vault took them, pending ones
    last; `memvault import` reads it back."""

    async def work(deps: Deps) -> None:
        owner = await authenticated(deps, key)
        counts: Counter[str] = Counter()
        async for record in await perform(deps, owner, EXPORT, {}):
            emit(json.dumps(record))
            counts[str(record["type"])] += 1
        say(f"exported {counted(counts['message'] + counts['pending'], 'message')} ({counts['pending']} pending) "
            f"and {counted(counts['chunk'], 'chunk')} of key {owner.id}")

    with_deps(data_dir, work)


@click.command("search")
@click.argument("query")
@click.option("--limit", metavar="N", help="At most this many results (default: as many as the budget holds).")
@click.option("--budget", metavar="TOKENS", help="Tokens the results may fill (default: MEMVAULT_SEARCH_BUDGET_TOKENS).")
@click.option("--session", default=None, help="Search this session's vault too, beside the core vault.")
@key_option
@data_dir_option
def search(query: str, limit: str | None, budget: str | None, session: str | None, key: str | None,
           data_dir: Path | None) -> None:
    """Search a key's memory; print the result with its ids.

    The result as one line of JSON, as `POST /v1/memory/search` answers: the items, best first,
    each with the ids of the messages it holds in `source_ids` (what `memvault forget` takes)."""
    data = {"query": query, "limit": limit, "budget_tokens": budget, "session_id": session}

    async def work(deps: Deps) -> None:
        found = plain_object(await perform(deps, await authenticated(deps, key), SEARCH, data, text=True))
        emit_json(found)
        say(f"{counted(len(found['items']), 'result')} ({found['tokens']} tokens)" if found["items"] else "nothing found")

    with_deps(data_dir, work)


@click.command("forget")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--session", default=None, help="Forget only in this session's vault (default: in every vault of the key).")
@key_option
@data_dir_option
def forget(ids: tuple[str, ...], session: str | None, key: str | None, data_dir: Path | None) -> None:
    """Forget messages by id, everywhere the key holds them.

    IDs as `memvault search` prints them; their text, the chunks holding it, their vectors and
    keyword entries go, in the vault and its mirror."""

    async def work(deps: Deps) -> None:
        result = plain_object(await perform(deps, await authenticated(deps, key), FORGET,
                                            {"ids": list(ids), "session_id": session}, text=True))
        emit_json(result)
        gone, missing = result["forgotten"], result["not_found"]
        say(f"forgot {counted(len(gone), 'message')}" + (f"; not found: {' '.join(missing)}" if missing else ""))

    with_deps(data_dir, work)


@click.command("stats")
@key_option
@data_dir_option
def stats(key: str | None, data_dir: Path | None) -> None:
    """Print counts of a key's vaults and mirror as JSON."""

    async def work(deps: Deps) -> None:
        owner = await authenticated(deps, key)
        found = plain_object(await perform(deps, owner, STATS, {}))
        emit_json(found, indent=2)
        say(f"{counted(len(found['vaults']), 'vault')} of key {owner.id}")

    with_deps(data_dir, work)


COMMANDS = (import_messages, export, search, forget, stats)

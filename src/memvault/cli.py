"""`memvault`: the command line, a thin shell over the library in local mode."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from memvault.core import brain, keys, memory
from memvault.core.deps import Deps
from memvault.core.errors import MemvaultError
from memvault.core.memory.messages import message_from
from memvault.core.models import Message
from memvault.core.settings import load_settings

IMPORT_BATCH = 200


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except MemvaultError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memvault", description="memvault, a memory layer for LLM applications (local mode).")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="serve the HTTP API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8787)
    serve.set_defaults(run=_serve)

    key_commands = commands.add_parser("keys", help="manage memory keys").add_subparsers(required=True, metavar="ACTION")
    create = key_commands.add_parser("create", help="create a key and print it (shown once)")
    create.add_argument("--label", default="")
    create.add_argument("--keep-archive", action="store_true", help="never purge this key's old memory")
    create.set_defaults(run=lambda a: _with_deps(lambda d: _keys_create(d, a)))
    key_commands.add_parser("list", help="list keys (never their secrets)").set_defaults(
        run=lambda a: _with_deps(_keys_list)
    )
    revoke = key_commands.add_parser("revoke", help="revoke a key by id")
    revoke.add_argument("key_id")
    revoke.set_defaults(run=lambda a: _with_deps(lambda d: keys.revoke_key(d.db, a.key_id, d.clock())))

    _brain_token_commands(commands)

    imp = commands.add_parser("import", help="import a JSONL file of messages")
    imp.add_argument("file", type=Path)
    imp.add_argument("--session", default=None)
    _key_argument(imp)
    imp.set_defaults(run=lambda a: _with_deps(lambda d: _import(d, a)))

    exp = commands.add_parser("export", help="export everything a key holds as JSONL")
    _key_argument(exp)
    exp.set_defaults(run=lambda a: _with_deps(lambda d: _export(d, a, sys.stdout)))

    search = commands.add_parser("search", help="search a key's memory")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=None)
    search.add_argument("--budget", type=int, default=None)
    search.add_argument("--session", default=None)
    _key_argument(search)
    search.set_defaults(run=lambda a: _with_deps(lambda d: _search(d, a)))

    forget = commands.add_parser("forget", help="forget messages by id, everywhere the key holds them")
    forget.add_argument("ids", nargs="+", metavar="ID")
    forget.add_argument("--session", default=None)
    _key_argument(forget)
    forget.set_defaults(run=lambda a: _with_deps(lambda d: _forget(d, a)))

    commands.add_parser("maintenance", help="run the nightly maintenance once, now").set_defaults(
        run=lambda a: _with_deps(_maintenance)
    )
    restore = commands.add_parser("restore", help="rebuild an empty database from a backup, then every mirror from its vault")
    restore.add_argument("path", type=Path, help="a backup's JSONL file, or the folder of its part files")
    restore.add_argument("--force", action="store_true", help="restore into a database that is not empty (rows there win)")
    restore.set_defaults(run=lambda a: _with_deps(lambda d: _restore(d, a)))

    check = commands.add_parser("check", help="compare every vault with its mirror; exit 1 if any differ")
    check.add_argument("--repair", action="store_true", help="rebuild each differing mirror from its vault")
    check.set_defaults(run=lambda a: _with_deps(lambda d: _check(d, a.repair)))

    mcp = commands.add_parser("mcp", help="serve MCP (tools and fact resources) over stdio, for one key and brain credential")
    _key_argument(mcp)
    mcp.add_argument(
        "--brain-token", default=os.environ.get("MEMVAULT_BRAIN_TOKEN"), help="brain credential (or MEMVAULT_BRAIN_TOKEN)"
    )
    mcp.set_defaults(run=lambda a: _with_deps(lambda d: _mcp_stdio(d, a)))

    stats = commands.add_parser("stats", help="counts of a key's vaults and mirror")
    _key_argument(stats)
    stats.set_defaults(run=lambda a: _with_deps(lambda d: _stats(d, a)))
    return parser


def _brain_token_commands(commands: Any) -> None:
    tokens = commands.add_parser("brain-token", help="manage brain credentials stored in the data folder")
    actions = tokens.add_subparsers(required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a brain credential and print its token (shown once)")
    create.add_argument("--scopes", required=True, help="scopes it may read, separated by `,` (from MEMVAULT_BRAIN_SCOPES)")
    create.add_argument("--writer", action="store_true", help="it may also write to those scopes")
    create.add_argument("--name", default="", help="a name to recognise it by (default: its id)")
    create.set_defaults(run=lambda a: _with_deps(lambda d: _brain_token_create(d, a)))
    actions.add_parser("list", help="list brain credentials (never their tokens)").set_defaults(
        run=lambda a: _with_deps(_brain_token_list)
    )
    revoke = actions.add_parser("revoke", help="revoke a brain credential by id; refused at once everywhere")
    revoke.add_argument("key_id", metavar="ID")
    revoke.set_defaults(run=lambda a: _with_deps(lambda d: _brain_token_revoke(d, a.key_id)))


async def _brain_token_create(deps: Deps, args: argparse.Namespace) -> None:
    stored, token = await brain.create_brain_token(deps, args.scopes.split(","), args.writer, args.name)
    role = "writer" if stored.writer else "reader"
    print(f"created {stored.id} ({stored.name}: {role} of {', '.join(stored.scopes)}); the token is shown once:",
          file=sys.stderr)
    print(token)


async def _brain_token_list(deps: Deps) -> None:
    for stored in await keys.list_brain_keys(deps.db):
        state = "revoked" if stored.revoked_at is not None else "active"
        role = "writer" if stored.writer else "reader"
        print(f"{stored.id}\t{state}\t{stored.name}\t{role}\t{','.join(stored.scopes)}")


async def _brain_token_revoke(deps: Deps, key_id: str) -> None:
    await keys.revoke_brain_key(deps.db, key_id, deps.clock())
    print(f"revoked {key_id}", file=sys.stderr)


def _key_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--key", default=os.environ.get("MEMVAULT_KEY"), help="memory key mk_… (or MEMVAULT_KEY)")


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from memvault.runtime.local import create_local_app

    settings = load_settings(os.environ)
    app = create_local_app(os.environ)
    # The app dates its responses itself; a relayed provider response keeps the provider's Server.
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=settings.log_level, server_header=False, date_header=False
    )
    return 0


def _with_deps(work: Callable[[Deps], Awaitable[Any]]) -> int:
    from memvault.runtime.local import build_local_deps, close_local_deps

    async def run() -> Any:
        deps = build_local_deps(load_settings(os.environ))
        try:
            return await work(deps)
        finally:
            await close_local_deps(deps)

    result = asyncio.run(run())
    return result if isinstance(result, int) else 0


async def _keys_create(deps: Deps, args: argparse.Namespace) -> None:
    _, secret = await keys.create_key(deps.db, args.label, deps.clock(), keep_archive=args.keep_archive)
    print(secret)


async def _keys_list(deps: Deps) -> None:
    for key in await keys.list_keys(deps.db):
        state = "revoked" if key.revoked_at is not None else "active"
        print(f"{key.id}\t{state}\t{key.label}")


def _messages_of(lines: Iterator[str], now: float) -> Iterator[Message]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise MemvaultError(f"line {number}: not JSON ({exc})") from exc
        message = message_from(data, now, f"line {number}")
        if message is not None:
            yield message


async def _import(deps: Deps, args: argparse.Namespace) -> None:
    from tqdm import tqdm

    key = await keys.authenticate(deps.db, args.key)
    with args.file.open(encoding="utf-8") as handle:
        messages = list(_messages_of(handle, deps.clock()))
    stored = 0
    with tqdm(total=len(messages), unit="msg", file=sys.stderr) as progress:
        for start in range(0, len(messages), IMPORT_BATCH):
            batch = messages[start : start + IMPORT_BATCH]
            result = await memory.store_conversation(deps, key.id, batch, args.session)
            stored += result.messages_accepted
            progress.update(len(batch))
    print(json.dumps({"messages_read": len(messages), "messages_accepted": stored}))


async def _export(deps: Deps, args: argparse.Namespace, out: TextIO) -> None:
    key = await keys.authenticate(deps.db, args.key)
    async for record in memory.export_memory(deps, key.id):
        out.write(json.dumps(record) + "\n")


async def _search(deps: Deps, args: argparse.Namespace) -> None:
    key = await keys.authenticate(deps.db, args.key)
    result = await memory.search_memory(
        deps, key.id, args.query, limit=args.limit, budget_tokens=args.budget, session_id=args.session
    )
    for item in result.items:
        print(json.dumps({"score": item.score, "window": item.window, "text": item.text}))


async def _forget(deps: Deps, args: argparse.Namespace) -> None:
    key = await keys.authenticate(deps.db, args.key)
    print(json.dumps(await memory.forget(deps, key.id, args.ids, args.session)))


async def _maintenance(deps: Deps) -> None:
    from memvault.runtime.cron import run_cron

    await run_cron(deps, "manual", new_pass=True)


async def _restore(deps: Deps, args: argparse.Namespace) -> int:
    from memvault.core.restore import restore_backup

    parts = sorted(args.path.glob("part-*.jsonl")) if args.path.is_dir() else [args.path]
    if not parts or not all(part.is_file() for part in parts):
        print(f"error: no backup at {args.path}", file=sys.stderr)
        return 2
    lines = [line for part in parts for line in part.read_text(encoding="utf-8").splitlines()]
    report = await restore_backup(deps, lines, force=args.force)
    print(json.dumps(report.to_dict(), sort_keys=True))
    return 1 if report.errors else 0


async def _check(deps: Deps, repair: bool) -> int:
    differences: list[str] = []
    rebuilt = 0
    for key_id, name in await memory.all_vaults(deps):
        found = await memory.mirror_differences(deps, key_id, name)
        if found and repair:
            await memory.rebuild_mirror(deps, key_id, name)
            found, rebuilt = await memory.mirror_differences(deps, key_id, name), rebuilt + 1
        differences += found
    for line in differences:
        print(line)
    print(json.dumps({"differences": len(differences), "rebuilt": rebuilt}))
    return 1 if differences else 0


async def _mcp_stdio(deps: Deps, args: argparse.Namespace) -> None:
    from memvault.api.mcp.tools import CallerSecrets, mcp_server
    from memvault.runtime.local import start_local

    await start_local(deps)
    secrets = CallerSecrets(memory_key=args.key, brain_token=args.brain_token)
    # Secrets are checked on every call, so a wrong or revoked one is a tool error the client shows.
    await mcp_server(deps, lambda _: secrets).run_stdio_async()


async def _stats(deps: Deps, args: argparse.Namespace) -> None:
    key = await keys.authenticate(deps.db, args.key)
    print(json.dumps(await memory.memory_stats(deps, key.id), indent=2))


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Keep a folder of markdown notes and the memvault brain in step.

  push  send the notes and skills/<slug>/SKILL.md files changed since the last sync; retire the
        notes deleted or excluded since. Needs a writer credential.
  pull  bring the brain's notes and skills into the folder. A file changed here since the last
        sync is never overwritten unless --force is given.

Nothing excluded (dotfiles, names holding "private" or "secret", .brain-sync-ignore) is read or
sent. --dry-run prints what would happen and changes nothing. The token comes from --token or
MEMVAULT_BRAIN_TOKEN; the server from --url or MEMVAULT_URL. docs/brain-sync.md has the details.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

import httpx
from brain_folder.manifest import ManifestError
from brain_folder.placement import PlacementError, Placer
from brain_folder.pull import pull
from brain_folder.push import push
from brain_folder.remote import Brain
from brain_folder.report import Report


async def run_sync(direction: str, folder: Path, url: str, token: str, placer: Placer, force: bool,
               dry_run: bool) -> Report:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        run = push if direction == "push" else pull
        return await run(Brain(client), folder, placer, force=force, dry_run=dry_run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("direction", choices=["push", "pull"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--url", default=os.environ.get("MEMVAULT_URL", "http://127.0.0.1:8787"))
    parser.add_argument("--token", default=os.environ.get("MEMVAULT_BRAIN_TOKEN"))
    parser.add_argument("--scope", default="shared", help="scope of a file no front matter or path rule places "
                                                          "(default: shared)")
    parser.add_argument("--entry-type", default="reference", help="type of such a file (default: reference)")
    parser.add_argument("--force", action="store_true", help="push: replace what changed in the brain; "
                                                             "pull: overwrite what changed here")
    parser.add_argument("--dry-run", action="store_true", help="print what would happen; change nothing")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a brain token is required (--token or MEMVAULT_BRAIN_TOKEN)")
    if args.direction == "push" and not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    try:
        placer = Placer(args.folder, args.scope, args.entry_type)
    except PlacementError as error:
        parser.error(str(error))
    try:
        report = asyncio.run(run_sync(args.direction, args.folder, args.url, args.token, placer, args.force,
                                      args.dry_run))
    except ManifestError as error:
        print(f"brain_sync: {error}", file=sys.stderr)
        return 2
    report.print(sys.stdout)
    return report.exit_status()


if __name__ == "__main__":
    sys.exit(main())

"""`memvault maintenance|backup|restore|check`: the operator's commands over a whole data folder."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

from memvault.cli.shell import (
    FOUND_PROBLEMS,
    CommandError,
    counted,
    data_dir_option,
    data_folder,
    emit,
    emit_json,
    json_option,
    say,
    with_deps,
)
from memvault.core import memory
from memvault.core.deps import Deps
from memvault.core.errors import Conflict


@click.command("maintenance")
@data_dir_option
def maintenance(data_dir: Path | None) -> int:
    """Run one invocation of the nightly maintenance now.

    Purge, idle-buffer flush, reconcile, brain upkeep and backup, within the budget of one cron
    invocation, starting a new pass if the last one is done; its report is one JSON line."""

    async def work(deps: Deps) -> int:
        from memvault.runtime.cron import run_cron

        report = await run_cron(deps, "manual", new_pass=True)  # prints the report line on stdout
        state = "the pass is finished" if report.finished else f"stopped at {report.stopped_at}; run it again to go on"
        say(f"maintenance: {counted(report.vaults_seen, 'vault')} tended, {counted(report.rows_purged, 'row')} and pending messages past retention purged; {state}")
        if report.errors:
            say(f"error: {counted(len(report.errors), 'step')} failed: {'; '.join(report.errors)}")
            return FOUND_PROBLEMS
        return 0

    return with_deps(data_dir, work)


@click.command("backup")
@json_option
@data_dir_option
def backup(as_json: bool, data_dir: Path | None) -> None:
    """Write a complete backup now and print its folder.

    What the nightly pass writes (the database, and every message of every vault), to the blob
    store under blobs/backups/; `memvault restore` takes the folder printed."""

    async def work(deps: Deps) -> None:
        from memvault.core.operations.backup import backup_now
        from memvault.core.operations.backup_format import BACKUP_PREFIX
        from memvault.runtime.local import BLOBS_FOLDER

        progress = await backup_now(deps, deps.clock())
        folder = Path(deps.settings.data_dir) / BLOBS_FOLDER / BACKUP_PREFIX / progress.backup_id
        say(f"backup {progress.backup_id}: {counted(sum(progress.rows.values()), 'row')} and "
            f"{counted(progress.messages, 'message')} in {counted(progress.parts, 'part')}")
        if as_json:
            emit_json({**progress.to_dict(), "folder": str(folder)})
        else:
            emit(str(folder))

    with_deps(data_dir, work)


@click.command("restore")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--force", is_flag=True, help="Restore into a data folder that is not empty: what is there wins, the backup fills in what is missing (also finishes a restore that stopped part-way).")
@data_dir_option
def restore(path: Path, force: bool, data_dir: Path | None) -> int:
    """Rebuild a data folder from a backup.

    PATH is a backup's JSONL file, or the folder of its part files. Keys, the brain and every
    vault's messages come back (messages searchable again); the report is printed as JSON."""
    parts = sorted(path.glob("part-*.jsonl")) if path.is_dir() else [path]
    if not parts:
        raise CommandError(f"no backup at {path}: expected a backup's JSONL file or a folder of part-*.jsonl files")
    lines = [line for part in parts for line in _text_of(part).splitlines()]
    # The command to run again names the folder this one opened: without it, it would open the
    # default folder (perhaps the one a server is using) instead.
    again = f"memvault restore {shlex.quote(str(path))} --data-dir {shlex.quote(str(data_folder(data_dir)))} --force"

    async def work(deps: Deps) -> int:
        from memvault.core.operations.restore import restore_backup

        try:
            report = await restore_backup(deps, lines, force=force)
        except Conflict as exc:
            raise CommandError(f"{exc.message} ({again})") from exc
        emit(json.dumps(report.to_dict(), sort_keys=True))
        say(f"restored backup {report.backup_id}: {counted(sum(report.rows.values()), 'row')}, "
            f"{counted(report.messages, 'message')} ({report.messages_stored} stored anew), "
            f"{counted(report.mirrors_rebuilt, 'mirror')} rebuilt")
        if report.errors:
            say(f"error: the restore is incomplete ({'; '.join(report.errors)}); "
                f"finish it with: {again}")
            return FOUND_PROBLEMS
        return 0

    return with_deps(data_dir, work, create=True)


def _text_of(part: Path) -> str:
    try:
        return part.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{part} is not a backup: it is not UTF-8 text") from exc


@click.command("check")
@click.option("--repair", is_flag=True, help="Rebuild each mirror that differs from its vault.")
@data_dir_option
def check(repair: bool, data_dir: Path | None) -> int:
    """Compare every vault with its mirror.

    Prints each difference and a JSON summary line; exits 1 if any remain."""

    async def work(deps: Deps) -> int:
        differences: list[str] = []
        rebuilt = vaults = 0
        for key_id, name in await memory.all_vaults(deps):
            vaults += 1
            found = await memory.mirror_differences(deps, key_id, name)
            if found and repair:
                await memory.rebuild_mirror(deps, key_id, name)
                found, rebuilt = await memory.mirror_differences(deps, key_id, name), rebuilt + 1
            differences += found
        for line in differences:
            emit(line)
        emit_json({"differences": len(differences), "rebuilt": rebuilt})
        say(f"checked {counted(vaults, 'vault')}: {counted(len(differences), 'difference')}, "
            f"{counted(rebuilt, 'mirror')} rebuilt")
        return FOUND_PROBLEMS if differences else 0

    return with_deps(data_dir, work)


COMMANDS = (maintenance, backup, restore, check)

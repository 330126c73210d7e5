"""What every command shares: which data folder it opens, how it opens it, and how it speaks.

stdout carries data only (a created secret on its own last line, JSON, JSONL); what a command did,
the folder it opened and every error go to stderr. An error is one line and a non-zero exit:
2 for one the user can fix (bad input, a missing file, an unknown key), 1 when the command ran but
found or left problems (``check``, ``restore``, ``maintenance``), 130 when interrupted."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from memvault.core.credentials import keys
from memvault.core.credentials.callers import CallerTokens, memory_caller
from memvault.core.deps import Deps
from memvault.core.errors import MemvaultError, Unauthorized
from memvault.core.settings import SETTINGS, Settings, load_settings, retired_settings, retired_warning

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
FAILED = 2
FOUND_PROBLEMS = 1
INTERRUPTED = 130
DATA_DIR_VARIABLE = next(s.name for s in SETTINGS if s.field == "data_dir")
KEY_VARIABLE = "MEMVAULT_KEY"
# click 8.2+ raises this for a group called without a command (earlier versions print its help).
NO_ARGUMENTS: tuple[type[Exception], ...] = tuple(
    kind for kind in [getattr(click.exceptions, "NoArgsIsHelpError", None)] if isinstance(kind, type)
)


class CommandError(click.ClickException):
    """A failure the command explains itself: printed as one line, exit 2."""

    exit_code = FAILED


def say(text: str) -> None:
    """A message for the person at the terminal (stderr)."""
    click.echo(text, err=True)


def counted(number: int, noun: str) -> str:
    """``1 key``, ``2 keys``."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


def emit(text: str) -> None:
    """Data (stdout)."""
    click.echo(text)


def emit_json(value: Any, indent: int | None = None) -> None:
    emit(json.dumps(value, indent=indent))


def data_dir_option(command: F) -> F:
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"The data folder to use (keys, memory, backups). [default: ${DATA_DIR_VARIABLE}, else ./.memvault]",
    )(command)


def key_option(command: F) -> F:
    return click.option(
        "--key", envvar=KEY_VARIABLE, show_envvar=True, metavar="MK_KEY",
        help="The memory key (mk_…) whose memory this is; it works only with the data folder it was created in.",
    )(command)


def json_option(command: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")(command)


def data_folder(given: Path | None) -> Path:
    """The folder a command opens, as an absolute path: ``--data-dir``, else the setting (the
    environment's, else ``./.memvault`` in the working folder)."""
    chosen = Path(load_settings(os.environ).data_dir) if given is None else given
    return chosen.expanduser().resolve()


def environment(folder: Path) -> dict[str, str]:
    """The process environment with the data folder set, for what reads its settings from one."""
    return {**os.environ, DATA_DIR_VARIABLE: str(folder)}


def open_folder(given: Path | None, create: bool) -> tuple[Path, Settings]:
    """The data folder and its settings; says which folder it is. Without ``create`` the folder
    must hold memvault data already, so a mistyped folder is not silently made."""
    from memvault.runtime.local import DATABASE_FILE

    folder = data_folder(given)
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"the data folder {folder} is a file, not a folder")
    if not create and not (folder / DATABASE_FILE).is_file():
        raise CommandError(
            f"no memvault data in {folder}: create a key there first (memvault keys create), "
            f"or name the folder that holds your data with --data-dir or {DATA_DIR_VARIABLE}"
        )
    say(f"data folder: {folder}")
    for name in retired_settings(os.environ):
        say(f"warning: {retired_warning(name)}")
    return folder, load_settings(environment(folder))


def with_deps(given: Path | None, work: Callable[[Deps], Awaitable[T]], create: bool = False) -> T:
    """Run ``work`` over the data folder's stores, closed (background writes finished) afterwards."""
    from memvault.runtime.local import build_local_deps, close_local_deps

    folder, settings = open_folder(given, create)

    async def run() -> T:
        deps = build_local_deps(settings)
        try:
            return await work(deps)
        finally:
            await close_local_deps(deps)

    try:
        return asyncio.run(run())
    except sqlite3.Error as exc:
        raise CommandError(f"the data in {folder} cannot be used: {exc}") from exc


async def authenticated(deps: Deps, secret: str | None) -> keys.MemoryKey:
    """The active key ``secret`` names, or an error that says what to do."""
    if not secret:
        raise CommandError(f"a memory key is required: --key mk_… or {KEY_VARIABLE}")
    try:
        return await memory_caller(deps, CallerTokens(memory_key=secret))
    except Unauthorized as exc:
        raise CommandError(
            f"{exc.message} in {deps.settings.data_dir} (a key works only with the data folder it was created in)"
        ) from exc


def run(group: click.Group, argv: Sequence[str] | None) -> int:
    """Run a command line; every failure becomes one line on stderr and an exit code."""
    try:
        code = group.main(args=None if argv is None else list(argv), prog_name="memvault", standalone_mode=False)
    except click.UsageError as exc:
        if isinstance(exc, NO_ARGUMENTS) and exc.ctx is not None:  # `memvault`, `memvault keys`: their help
            say(exc.ctx.get_help())
            return exc.exit_code
        where = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        return _failed(exc.format_message() + where, exc.exit_code)
    except click.ClickException as exc:
        return _failed(exc.format_message(), exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        return _failed("interrupted", INTERRUPTED)
    except SystemExit as exc:  # click's answer to a closed stdout (`memvault export | head`)
        return exc.code if isinstance(exc.code, int) else FOUND_PROBLEMS
    except MemvaultError as exc:
        return _failed(exc.message, FAILED)
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            return FOUND_PROBLEMS
        return _failed(_os_message(exc), FAILED)
    except Exception as exc:  # never a traceback: the type says what broke
        return _failed(f"unexpected {type(exc).__name__}: {exc}", FOUND_PROBLEMS)
    return code if isinstance(code, int) else 0


def _failed(message: str, code: int) -> int:
    say("error: " + " ".join(message.split()))
    return code


def _os_message(exc: OSError) -> str:
    reason = exc.strerror or type(exc).__name__
    return f"{exc.filename}: {reason}" if exc.filename else reason

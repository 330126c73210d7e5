"""`memvault usage` and `memvault limits`: what every memory key used, and a key's limits, in the
data folder or (`--url`) on a deployed memvault through its admin surface."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.admin_calls import admin_call, url_option
from memvault.cli.shell import data_dir_option, emit, emit_json, json_option, say
from memvault.core.usage.meter import COUNTS
from memvault.core.usage.operations import ADMIN_USAGE, GET_LIMITS, SET_LIMITS

SHOWN = ("calls", "input_tokens", "output_tokens", "memory_tokens", "messages_stored", "searches")


@click.command("usage")
@click.option("--from", "first_day", metavar="YYYY-MM-DD", default=None, help="First UTC day counted (default: --to).")
@click.option("--to", "last_day", metavar="YYYY-MM-DD", default=None, help="Last UTC day counted (default: today).")
@click.option("--group-by", type=click.Choice(["day", "model", "key"]), default="day", show_default=True,
              help="One line per UTC day, per model, or per memory key.")
@json_option
@url_option
@data_dir_option
def usage(first_day: str | None, last_day: str | None, group_by: str, as_json: bool, url: str | None,
          data_dir: Path | None) -> None:
    """Print every key's usage, a line per day, model or key.

    Columns, tab-separated: the group, then calls, input and output tokens, memory tokens,
    messages stored and searches (--json prints every count)."""
    data = {"from": first_day, "to": last_day, "group_by": group_by}
    found = admin_call(url, data_dir, ADMIN_USAGE, data)
    if as_json:
        emit_json(found)
        return
    column = "key_id" if group_by == "key" else group_by
    emit("\t".join([group_by, *SHOWN]))
    for row in found["rows"]:
        emit("\t".join([str(row[column]) or "-", *(str(row[name]) for name in SHOWN)]))
    emit("\t".join(["total", *(str(found["total"][name]) for name in SHOWN)]))
    say(f"usage from {found['from_day']} to {found['to_day']} (UTC); counts: {', '.join(COUNTS)}")


@click.command("limits")
@click.argument("key_id")
@click.option("--requests-per-minute", type=int, default=None, help="Calls admitted per UTC minute.")
@click.option("--provider-tokens-per-day", type=int, default=None, help="Provider input plus output tokens a UTC day.")
@click.option("--memory-tokens-per-day", type=int, default=None, help="Memory tokens injected a UTC day.")
@click.option("--clear", is_flag=True, help="Remove every limit of the key.")
@json_option
@url_option
@data_dir_option
def limits(key_id: str, requests_per_minute: int | None, provider_tokens_per_day: int | None,
           memory_tokens_per_day: int | None, clear: bool, as_json: bool, url: str | None,
           data_dir: Path | None) -> None:
    """Show a key's limits, or set them all at once.

    With a limit option, the key's limits become exactly those given (a limit not given is
    removed); with --clear, none; with neither, they are printed unchanged."""
    given = {"requests_per_minute": requests_per_minute, "provider_tokens_per_day": provider_tokens_per_day,
             "memory_tokens_per_day": memory_tokens_per_day}
    changing = clear or any(value is not None for value in given.values())
    if clear and any(value is not None for value in given.values()):
        raise click.UsageError("--clear removes every limit: give it alone")
    found = admin_call(url, data_dir, SET_LIMITS if changing else GET_LIMITS, {"id": key_id, **given})
    if as_json:
        emit_json(found)
    else:
        for name in given:
            emit(f"{name}\t{'none' if found[name] is None else found[name]}")
    if changing:
        say(f"limits of {key_id} set")


COMMANDS = (usage, limits)

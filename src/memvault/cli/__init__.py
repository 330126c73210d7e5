"""`memvault`: the command line, a thin shell over the library in local mode.

Commands live in modules by what they work on (``keys``, ``brain_tokens``, ``memory``, ``operations``, ``serving``);
``shell`` holds what they share: the data folder options, opening the stores, and the output rules
(data on stdout, messages and one-line errors on stderr). A new command or command group is a
click command in its own module, added to ``COMMANDS`` below."""

from __future__ import annotations

import os

# numpy's BLAS reads this once, when numpy loads. Its helper threads spin after every small product
# the search makes; on two cores that was 20 ms of CPU a routed call, half of all the call took
# (``docs/benchmarks.md``). One thread computes those products as fast.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from collections.abc import Sequence

import click

from memvault.cli import brain_tokens, keys, memory, operations, serving, usage
from memvault.cli.shell import run

COMMANDS: tuple[click.Command, ...] = (
    serving.serve,
    keys.keys_group,
    brain_tokens.brain_tokens_group,
    *memory.COMMANDS,
    *operations.COMMANDS,
    *usage.COMMANDS,
    serving.mcp,
)


@click.group("memvault", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="memvault", prog_name="memvault", message="%(prog)s %(version)s")
def cli() -> None:
    """memvault, a memory layer for LLM applications (local mode).

    Every command that opens data takes --data-dir (or MEMVAULT_DATA_DIR; default ./.memvault in
    the working folder) and says on stderr which folder it opened. Reference: docs/cli.md."""


for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: Sequence[str] | None = None) -> int:
    """The `memvault` entry point: the exit code of the command line ``argv`` (default: sys.argv)."""
    return run(cli, argv)

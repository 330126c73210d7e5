"""docs/cli.md as a newcomer follows it: its first session runs as written, every command the CLI
has is described there (and nothing else), and its export example is what an import reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from cli_support import MEMVAULT, ROOT, every_command, user_environment

from memvault import cli
from memvault.core.memory.transfer import held_from

REFERENCE = ROOT / "docs" / "cli.md"


def blocks_under(heading: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a section: (info string, text)."""
    section = REFERENCE.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, re.S)


def test_the_first_session_runs_as_written(tmp_path: Path) -> None:
    (chat_kind, chat), (script_kind, script) = blocks_under("A first session")
    assert (chat_kind, script_kind) == ("jsonl", "bash")
    (tmp_path / "chat.jsonl").write_text(chat)
    # The reader's clone, in a fresh shell: its .venv, and no memvault on the PATH until the block
    # puts it there.
    (tmp_path / ".venv").symlink_to(MEMVAULT.parents[1])
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != MEMVAULT.parent)
    env = {**user_environment(), "PATH": path}
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert '{"forgotten": ["m3"], "not_found": []}' in ran.stdout
    final = json.loads(ran.stdout.splitlines()[-1])["items"]  # the restored folder's search
    assert {tuple(r["source_ids"]) for r in final} == {("m1",), ("m2",)}
    assert "Dr. Okafor" not in (tmp_path / "everything.jsonl").read_text()
    assert f"data folder: {tmp_path / 'restored'}" in ran.stderr


def test_every_command_is_described_and_only_those() -> None:
    described = set(re.findall(r"^### `(memvault [a-z][a-z-]*(?: [a-z][a-z-]*){0,2})", REFERENCE.read_text(), re.M))
    commands = {name for name, command in every_command(cli.cli) if not hasattr(command, "commands")}
    assert described == commands


def test_the_export_example_is_what_an_import_reads() -> None:
    (kind, example), = blocks_under("The export format")
    records = [json.loads(line) for line in example.splitlines()]
    held = [held_from(r, 0.0, f"example line {i}") for i, r in enumerate(records, 1)]
    assert held[0] is None  # a chunk: cut again, not imported
    assert held[1] is not None and (held[1].message.id, held[1].session_id) == ("m1", None)
    assert held[2] is not None and (held[2].message.id, held[2].session_id) == ("s1", "trip")
    assert kind == "jsonl" and held[2].message.metadata == '{"chat":7}'

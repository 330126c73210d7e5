"""Shared by the CLI tests: `memvault` run as a user runs it (a subprocess started in a working
folder of its own, with no memvault variable set but the embedder's), and a conversation with
everything a vault can hold (sessions, metadata, a repeated text, stored and pending messages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

MEMVAULT = Path(sys.executable).with_name("memvault")
ROOT = Path(__file__).resolve().parents[2]
BASE = 1_700_000_000.0


def user_environment(**more: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMVAULT_")}
    return {**env, "MEMVAULT_EMBEDDER": "hash", **more}


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def errors(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("error:")]


# The ``shell`` fixture (conftest.py): `memvault ARGS` run in-process.
Shell = Callable[..., Ran]


def memvault(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None) -> Ran:
    done = subprocess.run([str(MEMVAULT), *args], cwd=cwd, env=env or user_environment(), input=stdin,
                          capture_output=True, text=True, timeout=300)
    return Ran(done.returncode, done.stdout, done.stderr)


def assert_fails(ran: Ran, code: int, *fragments: str) -> str:
    """The command failed with ``code`` and said why in one line on stderr, with no traceback."""
    assert ran.code == code, (ran.code, ran.err)
    assert "Traceback" not in ran.err and len(ran.errors) == 1, ran.err
    assert all(fragment in ran.errors[0] for fragment in fragments), (fragments, ran.errors[0])
    return ran.errors[0]


def created_key(folder: Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    ran = memvault("keys", "create", "--data-dir", str(folder), cwd=cwd, env=env)
    assert ran.code == 0, ran.err
    return ran.out.strip()


def conversation() -> list[dict[str, Any]]:
    """Lines of an import file: 14 core turns (enough for chunks and a pending tail), metadata on
    some, a text said again under another id, and two turns of a session."""
    lines: list[dict[str, Any]] = []
    for i in range(14):
        line: dict[str, Any] = {"role": "user" if i % 2 == 0 else "assistant", "id": f"t{i}", "timestamp": BASE + i * 60,
                                "content": f"Turn {i}: the ketch Albatross lies at berth {30 + i} of the marina, her sails "
                                           "furled and her deck hosed down after the long passage from the islands."}
        if i % 3 == 0:
            line["metadata"] = {"chat": 42, "turn": i, "tags": ["boat", str(i)]}
        if i == 5:
            line["model"] = "gpt-test"
        lines.append(line)
    lines.append({**lines[2], "id": "t2-again", "timestamp": BASE + 5000})
    lines.append({"role": "user", "id": "s1", "content": "Packing list: the red kayak paddles.", "vault": "session:trip"})
    lines.append({"role": "assistant", "id": "s2", "content": "Noted, the kayak paddles go in the van.",
                  "vault": "session:trip", "timestamp": "2024-05-01T10:00:00Z"})
    return lines


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def every_command(group: click.Group, path: str = "memvault") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((f"{path} {name}", command))
        if isinstance(command, click.Group):
            found += every_command(command, f"{path} {name}")
    return found

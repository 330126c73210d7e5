"""The in-process shell of the CLI tests: `memvault ARGS` through ``memvault.cli.main`` in a
working folder of its own, with no memvault variable set but the embedder's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import Ran, Shell

from memvault import cli


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Shell:
    for name in [n for n in os.environ if n.startswith("MEMVAULT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def run(*args: str) -> Ran:
        capsys.readouterr()
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run

"""The local data folder is its owner's alone when memvault makes it: every key's memory and every
brain scope lie in its files, and another account of the machine reading them would pass every wall."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from memvault.runtime.local import private_folder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")


def test_a_folder_memvault_makes_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # the common default, which leaves new folders readable by all
    try:
        made = private_folder(tmp_path / "nested" / "data")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_a_folder_that_exists_is_left_as_it_is_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    with caplog.at_level(logging.WARNING, logger="memvault.runtime.local"):
        private_folder(shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755
    assert any("chmod 700" in record.getMessage() for record in caplog.records)


def test_a_private_folder_that_exists_gives_no_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    with caplog.at_level(logging.WARNING, logger="memvault.runtime.local"):
        private_folder(private)
    assert not caplog.records

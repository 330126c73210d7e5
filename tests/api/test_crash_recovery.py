"""SIGKILL of the real server during concurrent writes and forgets loses no acknowledged write,
brings back no acknowledged forget, and leaves every vault and its mirror identical after one
restart and one more write (a short run of scripts/crash_loop.py; the script runs longer)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from crash_loop import run_rounds


def test_kill_9_during_concurrent_writes_loses_nothing_acknowledged(tmp_path: Path) -> None:
    results = run_rounds(tmp_path, rounds=2, seed=11, writers=4)
    assert all(r.acknowledged > 20 for r in results)
    assert [(r.lost, r.resurrected, r.differences) for r in results] == [(0, 0, [])] * len(results)

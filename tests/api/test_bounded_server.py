"""`memvault serve` under a low open-file limit, pressed by many keys, session vaults, reads of
sessions nobody wrote, idle connections and unauthenticated `GET /mcp`: it keeps answering another
tenant, holds a bounded number of descriptors, and restarts over a folder holding more vault files
than its limit. A short run of scripts/bounded_load.py (which prints the longer load's numbers)."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import bounded_load

from memvault.cli.server_limits import RESERVED_FDS, fd_budget

FD_LIMIT = 256
IDLE_CONNECTIONS = 300  # more than the server's whole limit


def test_a_server_at_its_open_file_limit_keeps_answering_and_restarts(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, IDLE_CONNECTIONS + 512)  # this test's own sockets
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    report = bounded_load.run_load(
        tmp_path, keys=40, sessions=300, idle=IDLE_CONNECTIONS, fd_limit=FD_LIMIT, embedder="hash", concurrency=8,
        settings={"MEMVAULT_IDLE_CONNECTION_SECONDS": "2"},
    )
    for moment, seen in report.held.items():
        print(f"{moment:<48} fds {seen.fds:>4}  RSS {seen.rss_mb:>6} MB  vault files {seen.vault_files}")
    assert set(report.statuses) == {200}, report.statuses
    assert report.files_made_by_reads == 0
    assert report.mcp_statuses and 200 not in report.mcp_statuses
    assert report.bystander_failures == []
    assert report.restarted
    started, after = report.held["started"], report.held["after the load"]
    assert after.vault_files > FD_LIMIT  # the restart opened a folder holding more vault files than its limit
    open_vaults = fd_budget(64, FD_LIMIT).open_vaults
    for seen in report.held.values():
        assert seen.fds <= RESERVED_FDS + 3 * open_vaults + 2 * fd_budget(64, FD_LIMIT).connections
    assert after.fds <= started.fds + 3 * open_vaults + 8  # the pool, and nothing the load left behind
    # Vault caches are let go with their vaults: far below the 472 MB an unbounded set of vaults reached.
    assert after.rss_mb <= started.rss_mb + 150

"""The workerd tier's session: the main stack, started once on first use and stopped before the
snapshot pair starts (one run at a time on the machine), and how long each start took."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

import pytest
from fake_upstream import FakeUpstream, ServerThread
from tier_fakes import HeldUpstream
from tier_stack import (
    BOT_TOKEN,
    MainStack,
    SnapshotRun,
    build_main_stack,
    prepare_recipe_project,
    start_expecting_failure,
    start_snapshot_run,
)
from workerd_runtime import Runtime

from fake_telegram import FakeTelegram

STARTS: dict[str, dict[str, float]] = {}
# When the tier's session began and ended (time.perf_counter), for its total in the summary.
SPAN: dict[str, float] = {}
# What tests measured, printed at the end of the run beside the starts.
MEASURED: list[str] = []
# Tests that start their own Workers run after every test of the main stack, once it has stopped.
OWN_STARTS = "snapshot_runs"


class Tier:
    def __init__(self, work: Path, runtime: Runtime) -> None:
        SPAN["began"] = time.perf_counter()
        self.work = work
        self.runtime = runtime
        self.upstream = HeldUpstream(FakeUpstream(answer="Noted, thank you."))
        self.telegram = FakeTelegram(BOT_TOKEN)
        self._servers = contextlib.ExitStack()
        self._main: MainStack | None = None
        self._failed: str | None = None
        self._stopped = False

    def main(self) -> MainStack:
        if self._failed:
            pytest.fail(f"the main stack did not start: {self._failed}", pytrace=False)
        if self._stopped:
            pytest.fail("the main stack was stopped for the snapshot pair: order the tests so it runs first",
                        pytrace=False)
        if self._main is None:
            # As a provider keeps idle connections open for minutes: workerd's pool may otherwise
            # hand a call the connection uvicorn's 5 s closed a moment before (a 502 on a busy machine).
            upstream = self._servers.enter_context(ServerThread(self.upstream, keep_alive_seconds=300))
            telegram = self._servers.enter_context(ServerThread(self.telegram))
            try:
                self._main = build_main_stack(self.work, self.runtime, upstream.url, telegram.url)
                # One after the other, so each start is timed alone.
                for dev, path in ((self._main.memvault, "/health"), (self._main.bot, "/")):
                    dev.start().wait_ready(path)
                    STARTS[dev.name] = dev.timing
            except BaseException as exc:
                self._failed = str(exc)[:2000]
                self.stop_main()
                raise
        return self._main

    def stop_main(self) -> None:
        self._stopped = self._main is not None
        if self._main is not None:
            self._main.bot.stop()
            self._main.memvault.stop()
        self._servers.close()

    def close(self) -> None:
        self.stop_main()
        SPAN.setdefault("ended", time.perf_counter())


class SnapshotRuns:
    """The deploy-style snapshot pair, one run at a time on one prepared copy: first the run that
    saves the snapshot at start, then (once it stopped) the run that starts from it."""

    def __init__(self, tier: Tier) -> None:
        self._tier = tier
        self._keys: tuple[str, str] | None = None
        self._config: Path | None = None
        self._runs: dict[bool, SnapshotRun] = {}

    def run(self, save: bool) -> SnapshotRun:
        if save not in self._runs:
            self._tier.stop_main()
            for other in self._runs.values():
                other.dev.stop()
            if self._config is None:
                self._config, *keys = prepare_recipe_project(self._tier.work)
                self._keys = (keys[0], keys[1])
            assert self._keys is not None
            run = start_snapshot_run(self._tier.work, self._tier.runtime, self._config, self._keys, save)
            self._runs[save] = run
            run.dev.wait_ready()
            STARTS[run.dev.name] = run.dev.timing
        return self._runs[save]

    def start_once(self, config: Path) -> subprocess.CompletedProcess[str]:
        """Start the Worker of ``config`` with a snapshot taken at start, as `wrangler dev` would,
        for a Worker expected not to start: its output once wrangler gave up."""
        for run in self._runs.values():
            run.dev.stop()
        return start_expecting_failure(self._tier.work, self._tier.runtime, config)

    def close(self) -> None:
        for run in self._runs.values():
            run.dev.stop()

"""Lines a folder prints at the end of the run (a tier's start times, the bundle's size). Under
xdist the tests run in worker processes, whose own summaries nobody sees: each worker hands its
lines to the controller, which prints them (tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WORKER_OUTPUT_KEY = "summary_lines"


def hand_to_controller(config: Any, lines: list[str]) -> None:
    """On an xdist worker, send ``lines`` to the controller at the end of its session; elsewhere nothing."""
    output = getattr(config, "workeroutput", None)
    if output is not None:
        output.setdefault(WORKER_OUTPUT_KEY, []).extend(lines)


def summary_hooks(lines: Callable[[], list[str]]) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    """A folder's ``pytest_sessionfinish`` and ``pytest_terminal_summary`` for its end-of-run
    ``lines``: handed to the controller from an xdist worker, printed in a serial run."""

    def pytest_sessionfinish(session: Any) -> None:
        hand_to_controller(session.config, lines())

    def pytest_terminal_summary(terminalreporter: Any) -> None:
        for line in lines():
            terminalreporter.write_line(line)

    return pytest_sessionfinish, pytest_terminal_summary

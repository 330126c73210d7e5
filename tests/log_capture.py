"""A log handler that keeps every line, for tests that check what the logs hold."""

from __future__ import annotations

import logging


class Logs(logging.Handler):
    """Every record of the process while a test runs, formatted as a handler prints it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

"""Reports how long the Pyodide tier took, and the Worker entry's import time in it, at the end of the pytest run."""

from __future__ import annotations

import sys
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    module = sys.modules.get("test_pyodide_tier")
    timing = getattr(module, "TIER_TIMING", None)
    if timing:
        parts = ", ".join(f"{name.removesuffix('_seconds')} {value:.1f} s" for name, value in timing.items())
        terminalreporter.write_line(f"pyodide tier: {parts}")
    if timing and "entry_import_seconds" in timing:
        terminalreporter.write_line(
            f"pyodide tier: importing the Worker entry (memvault, FastAPI, pydantic, the runtime SDK) in a fresh "
            f"interpreter took {timing['entry_import_seconds']:.2f} s"
        )

"""Reports how long the Pyodide tier took, and the Worker entry's import time in it, at the end of the pytest run."""

from __future__ import annotations

import sys

from run_summary import summary_hooks


def summary_lines() -> list[str]:
    module = sys.modules.get("test_pyodide_tier")
    timing = getattr(module, "TIER_TIMING", None)
    if not timing:
        return []
    parts = ", ".join(f"{name.removesuffix('_seconds')} {value:.1f} s" for name, value in timing.items())
    lines = [f"pyodide tier: {parts}"]
    if "entry_import_seconds" in timing:
        lines.append(f"pyodide tier: importing the Worker entry (memvault, FastAPI, pydantic, the runtime SDK) in a "
                     f"fresh interpreter took {timing['entry_import_seconds']:.2f} s")
    return lines


pytest_sessionfinish, pytest_terminal_summary = summary_hooks(summary_lines)

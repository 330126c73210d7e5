"""Why the Worker serves no /mcp (docs/workerd.md, "MCP on the Worker"): the MCP SDK memvault uses
cannot be vendored into python_modules/, because PyPI has no Pyodide wheel for packages it needs.
pip is asked for exactly what a vendoring would ask; once it resolves, this fails and the Worker
can mount /mcp."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from importlib.metadata import requires, version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from workerd_runtime import pip_download


def test_the_mcp_sdk_has_no_pyodide_wheels_for_what_it_needs() -> None:
    pinned = f"mcp=={version('mcp')}"
    assert any(r.startswith("jsonschema") for r in requires("mcp") or [])
    with tempfile.TemporaryDirectory() as folder:
        sdk = pip_download([pinned], Path(folder))
        assert sdk.returncode != 0, "the MCP SDK now resolves for Pyodide: mount /mcp on the Worker"
        assert "rpds-py" in sdk.stdout + sdk.stderr
        crypto = pip_download(["cryptography"], Path(folder))
        assert crypto.returncode != 0, "cryptography now has a Pyodide wheel on PyPI"
    # ...and the server memvault builds on imports it as it loads.
    loaded = subprocess.run([sys.executable, "-c", "import sys, mcp.server.mcpserver; print('cryptography' in sys.modules)"],
                            capture_output=True, text=True, timeout=120)
    assert loaded.stdout.strip() == "True", loaded.stderr

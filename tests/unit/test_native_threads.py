"""A local memvault process runs numpy's BLAS on one thread, whatever the environment asks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from threadpoolctl import threadpool_info
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps
build_local_deps(load_settings({"MEMVAULT_DATA_DIR": sys.argv[1], "MEMVAULT_EMBEDDER": "hash"}))
print(json.dumps([pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]))
"""


def test_a_local_composition_leaves_blas_one_thread(tmp_path: Path) -> None:
    # Four threads asked of OpenBLAS, so the probe means something on a machine of any size.
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    threads = json.loads(done.stdout.strip().splitlines()[-1])
    assert threads and set(threads) == {1}

"""Running this repository's Python Workers in the workerd that the pinned wrangler ships.

workerd starts a Python Worker with a Pyodide runtime bundle it downloads from Cloudflare the first
time. Where that host cannot be reached, a development bundle built for the same workerd (kept at
``../shared/workerd/pyodide_dev.capnp.bin`` beside the repository) stands in: workerd is run
through a wrapper that names the folder holding it, and the Worker gets the compatibility flags
that make workerd use it. ``scripts/workers-dev`` and the workerd test tier both start Workers
through this module.

It also fills ``python_modules/`` the way a deploy does, when pywrangler cannot (its ``sync``
downloads CPython for Emscripten and reads the Pyodide package index): the Pyodide wheels that
PyPI has for ``[project].dependencies``, plus the runtime SDK pywrangler always vendors.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from pyodide_wheels import platform  # noqa: E402

WRANGLER = ROOT / "node_modules" / ".bin" / "wrangler"
SHARED_BUNDLE = ROOT.parent / "shared" / "workerd" / "pyodide_dev.capnp.bin"
# workerd looks for the development bundle under this name in the folder it is given.
BUNDLE_NAME = "pyodide_dev.capnp.bin"
BUNDLE_FOLDER = ROOT / ".cache" / "pyodide-bundle"
WHEEL_CACHE = ROOT / ".venv" / "worker-wheels"
RELEASED_BUNDLE_HOST = "pyodide-capnp-bin.edgeworker.net"
# Select the development bundle, and turn off the flags that would pick a released one (each names
# a released Pyodide) or the newer SDK loader that bundle predates.
OFFLINE_BUNDLE_FLAGS = ("python_workers_development", "no_python_workers_20250116", "no_python_workers_20260610",
                        "no_python_workers_314")
# Production's compatibility date implies it; the offline flags above turn it off, so a run that
# takes a deploy-style snapshot names it again (without it the snapshot is taken before the
# runtime's import-time entropy patches apply, and importing pydantic_core aborts it).
DEDICATED_SNAPSHOT_FLAG = "python_dedicated_snapshot"
# pywrangler vendors the Python Workers SDK beside [project].dependencies: from compatibility date
# 2026-04-21 `import workers` comes from python_modules/.
RUNTIME_SDK = "workers-runtime-sdk"


def workerd_binary() -> Path:
    """The workerd that the pinned wrangler runs (its own dependency, not the top-level one)."""
    found = sorted((ROOT / "node_modules" / "wrangler" / "node_modules" / "@cloudflare").glob("workerd-*/bin/workerd"))
    if not found:
        found = sorted((ROOT / "node_modules" / "@cloudflare").glob("workerd-*/bin/workerd"))
    if not found:
        raise FileNotFoundError("wrangler's workerd binary is missing: run `npm ci`")
    return found[0]


def max_compatibility_date(binary: Path | None = None) -> str:
    """The newest compatibility date the workerd binary supports, as it reports it when asked for
    a later one (the npm package's own ``compatibilityDate`` lags behind the binary's)."""
    config = 'using Workerd = import "/workerd/workerd.capnp";\n' \
             'const config :Workerd.Config = (services = [(name = "main", worker = .w)]);\n' \
             'const w :Workerd.Worker = (modules = [(name = "w.js", esModule = "export default {}")],' \
             ' compatibilityDate = "2999-12-31");\n'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "probe.capnp"
        path.write_text(config)
        done = subprocess.run([str(binary or workerd_binary()), "serve", str(path)], capture_output=True, text=True,
                              timeout=60)
    found = re.search(r'newest date supported by this server binary is "(\d{4}-\d{2}-\d{2})"', done.stdout + done.stderr)
    if found is None:
        raise RuntimeError(f"workerd did not name its newest compatibility date: {(done.stdout + done.stderr)[-500:]}")
    return found.group(1)


def released_bundle_reachable(timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((RELEASED_BUNDLE_HOST, 443), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass(frozen=True)
class Runtime:
    """Which Pyodide bundle workerd runs Python Workers with: the released one it downloads, or the
    offline development bundle in ``bundle_folder``."""

    offline: bool
    bundle_folder: Path | None = None

    def describe(self) -> str:
        if not self.offline:
            return "the released Pyodide bundle (downloaded by workerd)"
        return f"the offline Pyodide bundle in {self.bundle_folder}"

    def compatibility_flags(self, flags: list[str] | tuple[str, ...], snapshot: bool = False) -> list[str]:
        """The Worker's flags for this runtime; ``snapshot`` for a deploy-style snapshot run."""
        wanted = list(flags)
        if self.offline:
            wanted += [flag for flag in OFFLINE_BUNDLE_FLAGS if flag not in wanted]
            if snapshot and DEDICATED_SNAPSHOT_FLAG not in wanted:
                wanted.append(DEDICATED_SNAPSHOT_FLAG)
        return wanted

    def workerd_wrapper(self, path: Path, extra_args: list[str] | tuple[str, ...] = ()) -> Path | None:
        """Write a script that runs wrangler's workerd with this runtime's arguments (point
        ``MINIFLARE_WORKERD_PATH`` at it); None when plain workerd will do."""
        args = [*(["--pyodide-bundle-disk-cache-dir", str(self.bundle_folder)] if self.offline else []), *extra_args]
        if not args:
            return None
        quoted = " ".join(_shell_quote(arg) for arg in args)
        path.write_text(f'#!/bin/sh\nexec {_shell_quote(str(workerd_binary()))} "$@" {quoted}\n')
        path.chmod(0o755)
        return path


def snapshot_args(folder: Path, save: bool) -> list[str]:
    """workerd's arguments to save a deploy-style memory snapshot into ``folder`` at start, or to
    start from the one saved there."""
    folder.mkdir(parents=True, exist_ok=True)
    mode = ["--python-save-snapshot"] if save else ["--python-load-snapshot", "snapshot.bin"]
    return [*mode, "--python-snapshot-dir", str(folder), "--pyodide-package-disk-cache-dir", str(folder)]


def find_runtime(shared_bundle: Path = SHARED_BUNDLE, bundle_folder: Path = BUNDLE_FOLDER) -> Runtime | str:
    """The runtime to use, or why there is none: the released bundle where its host is reachable,
    else the offline bundle where it is present."""
    if released_bundle_reachable():
        return Runtime(offline=False)
    if not shared_bundle.is_file():
        return (f"{RELEASED_BUNDLE_HOST} is unreachable (no internet) and the offline Pyodide bundle "
                f"../shared/workerd/{BUNDLE_NAME} is not beside the repository")
    bundle_folder.mkdir(parents=True, exist_ok=True)
    target = bundle_folder / BUNDLE_NAME
    source = shared_bundle.stat()
    if not target.is_file() or (target.stat().st_size, target.stat().st_mtime_ns) != (source.st_size, source.st_mtime_ns):
        target.unlink(missing_ok=True)
        shutil.copy2(shared_bundle, target)
        target.chmod(0o644)
    return Runtime(offline=True, bundle_folder=bundle_folder)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@dataclass
class VendorReport:
    """What ``vendor_python_modules`` put in: each distribution's version, and the requirements
    PyPI has no Pyodide wheel for (left out)."""

    installed: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"python_modules/: {', '.join(f'{n} {v}' for n, v in sorted(self.installed.items()))}",
                *(f"python_modules/: {r} left out (PyPI has no Pyodide wheel for it)" for r in self.missing)]


def worker_requirements(project: Path) -> list[str]:
    """``[project].dependencies`` of ``project`` and the runtime SDK, each pinned to the version this
    interpreter has installed (so the Worker runs what the CPython tests ran), else as declared."""
    declared = tomllib.loads((project / "pyproject.toml").read_text()).get("project", {}).get("dependencies", [])
    pinned = []
    for requirement in [*declared, RUNTIME_SDK]:
        name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
        try:
            pinned.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            pinned.append(requirement)
    return pinned


def pip_download(requirements: list[str], dest: Path, deps: bool = True) -> subprocess.CompletedProcess[str]:
    """pip asked for the Pyodide wheels of ``requirements`` (and, with ``deps``, what they need)."""
    tag, python = platform()
    abi = "cp" + python.replace(".", "")
    command = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:",
               "--platform", tag, "--python-version", python, "--implementation", "cp", "--abi", abi,
               "--abi", "abi3", "--abi", "none", "--dest", str(dest), *([] if deps else ["--no-deps"]), *requirements]
    return subprocess.run(command, capture_output=True, text=True)


def fetch_wheels(requirements: list[str], cache: Path = WHEEL_CACHE) -> tuple[Path, list[str]]:
    """Download the Pyodide wheels of ``requirements`` (with what they depend on) into a folder of
    ``cache`` kept for exactly these requirements; returns it and the requirements without a wheel."""
    tag, python = platform()
    key = "\n".join([tag, python, *sorted(requirements)])
    folder = cache / re.sub(r"[^A-Za-z0-9_.-]+", "_", "-".join(sorted(requirements)))[:150]
    stamp = folder / ".requirements"
    if stamp.is_file() and stamp.read_text().split("\n--missing--\n")[0] == key:
        missing = stamp.read_text().partition("\n--missing--\n")[2]
        return folder, [line for line in missing.splitlines() if line]
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    missing = []
    with tempfile.TemporaryDirectory() as probe:
        for requirement in requirements:
            done = pip_download([requirement], Path(probe), deps=False)
            if done.returncode != 0 and "No matching distribution" not in done.stderr:
                raise RuntimeError(f"pip could not look up {requirement}:\n{done.stderr[-2000:]}")
            if done.returncode != 0:
                missing.append(requirement)
    available = [r for r in requirements if r not in missing]
    if available and pip_download(available, folder).returncode != 0:
        raise RuntimeError(f"pip could not resolve Pyodide wheels for {', '.join(available)}")
    stamp.write_text(key + "\n--missing--\n" + "\n".join(missing))
    return folder, missing


def vendor_python_modules(project: Path, into: Path | None = None) -> VendorReport:
    """Fill ``python_modules/`` of ``project`` from PyPI's Pyodide wheels, as a deploy vendors it."""
    target = into or project / "python_modules"
    wheels, missing = fetch_wheels(worker_requirements(project))
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    report = VendorReport(missing=missing)
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            # A wheel's .data folder holds scripts and headers for an installer, nothing importable.
            members = [m for m in archive.namelist() if "__pycache__/" not in m and not m.split("/")[0].endswith(".data")]
            archive.extractall(target, members)
        name, wheel_version = wheel.name.split("-")[:2]
        report.installed[name] = wheel_version
    return report


def main(argv: list[str] | None = None) -> int:
    """``python3 scripts/workerd_runtime.py max-date|vendor PROJECT``: the two helpers by hand."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["max-date"]:
        print(max_compatibility_date())
        return 0
    if args[:1] == ["vendor"] and len(args) == 2:
        print("\n".join(vendor_python_modules(Path(args[1]).resolve()).lines()))
        return 0
    print(main.__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

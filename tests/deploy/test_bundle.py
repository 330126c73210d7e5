"""Packaging proof: `wrangler deploy --dry-run --outdir` (offline) builds the bundle Cloudflare would
receive. It must hold the entry, the Durable Object module, the memvault package (the portal's
static files included), the D1 migrations and whatever `pywrangler sync` vendored into
python_modules/ under the import names the code uses, and nothing else (no tests, no local-only
code). pywrangler itself cannot run here (it downloads CPython and reads the Pyodide index), so
python_modules/ is filled as scripts/workerd_runtime.py fills it for `wrangler dev`: PyPI's Pyodide
wheels of `[project].dependencies` and the runtime SDK. The bundle's compressed size is printed
against the Workers plans' limits at the end of the run."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from workerd_runtime import vendor_python_modules

from node_tools import node_env

ROOT = Path(__file__).resolve().parents[2]
WRANGLER = ROOT / "node_modules" / ".bin" / "wrangler"
# What the Workers runtime provides (Pyodide's stdlib aside) or pywrangler vendors from pyproject.
PLATFORM_IMPORTS = {"js", "pyodide", "workers", "asgi", "fastapi", "pydantic", "starlette", "numpy"}
# Compressed size limits of a Worker, Free and Paid plans (vendored python_modules/ count too).
PLAN_LIMITS_KIB = {"Free": 3 * 1024, "Paid": 10 * 1024}
# What the run measured, for the summary line (tests/deploy/conftest.py prints it).
MEASURED: dict[str, Any] = {}
BINDINGS = ("env.VAULT (Vault)", "env.DB (memvault-production)", "env.VECTORIZE", "env.BODIES", "env.AI", "env.CACHE")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if not WRANGLER.exists():
        pytest.skip("node_modules/.bin/wrangler is missing: run `npm ci` (scripts/test does)")
    # Build from a copy so the test never races another run over build/worker in the shared tree.
    project = tmp_path_factory.mktemp("project")
    for folder in ("src", "durable_objects", "migrations"):
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "build_worker.py", project / "scripts" / "build_worker.py")
    shutil.copy2(ROOT / "wrangler.toml", project / "wrangler.toml")
    shutil.copy2(ROOT / "pyproject.toml", project / "pyproject.toml")
    MEASURED["left_out"] = vendor_python_modules(project).missing
    out = project / "dist"
    done = subprocess.run(
        [str(WRANGLER), "deploy", "--dry-run", "--env", "production", "--outdir", str(out)],
        cwd=project, capture_output=True, text=True, timeout=180, env=node_env(WRANGLER_SEND_METRICS="false"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


def bundled_files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "README.md"}


def test_bundle_holds_entry_durable_object_package_and_migrations(bundle: tuple[Path, str]) -> None:
    out, log = bundle
    files = bundled_files(out)
    assert "entry.py" in files
    assert {"durable_objects/__init__.py", "durable_objects/vault.py"} <= files
    assert {"memvault/__init__.py", "memvault/core/memory/store.py", "memvault/core/brain/facts.py", "memvault/runtime/workers.py",
            "memvault/runtime/cron.py", "memvault/adapters/cloudflare/do_sql.py", "memvault/api/app.py"} <= files
    migrations = {f"migrations/{p.name}" for p in (ROOT / "migrations").glob("[0-9][0-9][0-9][0-9]_*.sql")}
    assert migrations and migrations <= files
    # wrangler's own module table names the same modules it uploads.
    assert re.search(r"│ durable_objects/vault\.py\s+│ python", log)
    assert re.search(r"│ migrations/0001_\w+\.sql\s+│ text", log)


def test_bundle_carries_what_python_modules_holds(bundle: tuple[Path, str]) -> None:
    """wrangler uploads python_modules/ from the project root beside the staged module root, under
    its own prefix, so `import workers` resolves to the vendored SDK."""
    out, log = bundle
    files = bundled_files(out)
    sdk = {f"python_modules/{name}" for name in ("workers/__init__.py", "workers/entrypoints.py", "workers/rpc.py",
                                                 "workers/asgi.py", "workers/workflows.js", "asgi.py")}
    assert sdk <= files
    assert not [f for f in files if f.startswith("python_modules/") and f.endswith(".pyc")]
    assert re.search(r"│ Vendored Modules\s+│", log)


def test_bundle_carries_the_portal_files_as_text_modules(bundle: tuple[Path, str]) -> None:
    """The Workers runtime puts text modules on Python's file system (JavaScript modules it keeps
    to itself, and *.css matches no default rule), so each portal file must go up as text."""
    out, log = bundle
    portal = ROOT / "src" / "memvault" / "api" / "portal"
    for name in ("index.html", "portal.css", "session.js", "portal.js", "portal_actions.js", "portal_receipts.js",
                 "portal_skills.js", "portal_usage.js"):
        assert (out / "memvault" / "api" / "portal" / name).read_bytes() == (portal / name).read_bytes()
        assert re.search(rf"│ memvault/api/portal/{re.escape(name)}\s+│ text", log), name


def test_bundle_carries_no_tests_and_no_local_only_code(bundle: tuple[Path, str]) -> None:
    files = bundled_files(bundle[0])
    own = {f for f in files if not f.startswith("python_modules/")}
    assert not [f for f in own if f.startswith("tests/") or "/test_" in f or f.endswith("conftest.py")]
    assert not [f for f in files if f.startswith(("memvault/adapters/local/", "memvault/api/mcp/", "memvault/cli/"))]
    assert "memvault/runtime/local.py" not in files
    assert not [f for f in files if "__pycache__" in f or f.endswith(".pyc")]


def unresolved_imports(out: Path, own: set[str]) -> list[str]:
    """Imports of the bundle's modules that resolve neither inside it (for the top-level names in
    ``own``) nor in the standard library or on the platform."""
    files = {f for f in bundled_files(out) if not f.startswith("python_modules/")}
    unresolved = []
    for name in sorted(f for f in files if f.endswith(".py")):
        tree = ast.parse((out / name).read_text())
        for node in ast.walk(tree):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules = [node.module]
            for module in modules:
                top = module.split(".")[0]
                if top in own:
                    path = module.replace(".", "/")
                    if f"{path}.py" not in files and f"{path}/__init__.py" not in files:
                        unresolved.append(f"{name}: {module}")
                elif top not in sys.stdlib_module_names and top not in PLATFORM_IMPORTS and top != "__future__":
                    unresolved.append(f"{name}: {module}")
    return unresolved


def test_every_import_in_the_bundle_resolves_inside_it_or_on_the_platform(bundle: tuple[Path, str]) -> None:
    assert unresolved_imports(bundle[0], {"memvault", "durable_objects", "entry"}) == []


def test_bundle_binds_everything_health_requires(bundle: tuple[Path, str]) -> None:
    log = bundle[1]
    for binding in BINDINGS:
        assert binding in log
    assert "env.MEMVAULT_CRON_SCHEDULES" not in log  # the schedule is no var: the bundle carries it


def test_bundle_counts_the_cron_triggers_of_the_environment_it_was_built_for(bundle: tuple[Path, str]) -> None:
    """`--env production` ran production's own build command, which wrote production's crons
    (as wrangler.toml states them) into the module /health counts."""
    out, log = bundle
    config = tomllib.loads((ROOT / "wrangler.toml").read_text())
    written: dict[str, object] = {}
    exec((out / "memvault" / "adapters" / "cloudflare" / "triggers.py").read_text(), written)
    assert written["CRONS"] == tuple(config["env"]["production"]["triggers"]["crons"])
    assert "cron triggers of production: ['17,47 3-5 * * *']" in log


def test_the_bundle_fits_the_paid_plan_and_its_size_is_reported(bundle: tuple[Path, str]) -> None:
    found = re.search(r"Total Upload: ([\d.]+) KiB / gzip: ([\d.]+) KiB", bundle[1])
    assert found, bundle[1][-2000:]
    MEASURED["upload_kib"], MEASURED["gzip_kib"] = float(found.group(1)), float(found.group(2))
    assert MEASURED["gzip_kib"] <= PLAN_LIMITS_KIB["Paid"]

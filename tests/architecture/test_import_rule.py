"""ARCHITECTURE.md section 3: imports flow entry/durable_objects -> runtime -> {api, adapters} -> core."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
PLATFORM = {"js", "pyodide", "workers"}


def module_name(path: Path) -> str:
    if path.is_relative_to(SRC):
        parts = path.relative_to(SRC).with_suffix("").parts
    elif path.is_relative_to(ROOT):
        parts = path.relative_to(ROOT).with_suffix("").parts
    else:
        parts = path.with_suffix("").parts[-1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    package = module_name(path).rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            elif node.module:
                found.add(node.module)
    return found


def python_files() -> list[Path]:
    files = [*SRC.rglob("*.py"), *(ROOT / "durable_objects").rglob("*.py")]
    return sorted(p for p in files if "__pycache__" not in p.parts)


def layer_of(module: str) -> str:
    if module == "memvault":
        return "version"
    if module in {"entry"} or module.startswith("durable_objects"):
        return "edge"
    for layer in ("core", "adapters.cloudflare", "adapters.local", "api", "runtime"):
        if module == f"memvault.{layer}" or module.startswith(f"memvault.{layer}."):
            return layer
    return "package"


# Which of our layers each layer may import.
ALLOWED_LAYERS = {
    "core": {"core"},
    "adapters.local": {"core", "adapters.local"},
    "adapters.cloudflare": {"core", "adapters.cloudflare"},
    "api": {"core", "api"},
    "runtime": {"core", "api", "adapters.local", "adapters.cloudflare", "runtime"},
    "edge": {"core", "runtime", "adapters.cloudflare", "edge"},
    "package": {"core", "api", "adapters.local", "runtime", "package"},
}
MAY_IMPORT_PLATFORM = {"adapters.cloudflare", "edge"}


def violations() -> list[str]:
    found = []
    for path in python_files():
        module = module_name(path)
        layer = layer_of(module)
        for imported in imported_modules(path):
            top = imported.split(".")[0]
            if top in PLATFORM:
                if layer not in MAY_IMPORT_PLATFORM:
                    found.append(f"{module} imports platform module {imported}")
                continue
            if top in {"memvault", "durable_objects", "entry"}:
                target = layer_of(imported)
                if target != "version" and target not in ALLOWED_LAYERS[layer]:
                    found.append(f"{module} ({layer}) imports {imported} ({target})")
                continue
            numpy_in_vectors = top == "numpy" and module == "memvault.core.vectors"
            if layer == "core" and top not in STDLIB and not numpy_in_vectors:
                found.append(f"{module} (core) imports third-party {imported}")
            if layer in {"adapters.cloudflare", "edge"} and top in {"fastapi", "pydantic", "numpy"} and module != "entry":
                found.append(f"{module} imports {imported}, which cannot load in the Pyodide test tier")
    return found


def test_import_rule_holds() -> None:
    assert violations() == []


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import fastapi\nfrom js import fetch\n")
    assert "fastapi" in imported_modules(bad)
    assert "js" in imported_modules(bad)


@pytest.mark.parametrize("path", python_files(), ids=lambda p: module_name(p))
def test_nothing_runs_at_import_time_beyond_definitions(path: Path) -> None:
    """Workers snapshot modules at import: no I/O or environment reads at top level."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        for call in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
            if isinstance(call, ast.Call) and isinstance(call.func, (ast.Attribute, ast.Name)):
                name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
                assert name not in {"open", "connect", "getenv", "environ", "urlopen", "run"}, (
                    f"{module_name(path)} calls {name}() at import time"
                )

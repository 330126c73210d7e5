"""ARCHITECTURE.md section 3: imports flow entry/durable_objects -> runtime -> {api, adapters} -> core."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
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
                # ``from package import name`` may import a submodule: count that too.
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def python_files() -> list[Path]:
    files = [*SRC.rglob("*.py"), *(ROOT / "durable_objects").rglob("*.py")]
    return sorted(p for p in files if "__pycache__" not in p.parts)


def layer_of(module: str) -> str:
    if module == "memvault":
        return "version"
    if module in {"entry"} or module.startswith("durable_objects"):
        return "edge"
    for layer in ("core", "adapters.cloudflare", "adapters.local", "api", "runtime", "client"):
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
    "package": {"core", "api", "adapters.local", "runtime", "client", "package"},
    # Other Workers load the client: core's floor only, never an adapter, the API or a runtime.
    "client": {"core", "client"},
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
            if layer in {"core", "client"} and top not in STDLIB and not numpy_in_vectors:
                found.append(f"{module} ({layer}) imports third-party {imported}")
            if layer == "client" and imported.startswith("memvault.core.") and wing_of(imported) != "floor":
                found.append(f"{module} (client) imports {imported}: the client takes core's floor only")
            if layer in {"adapters.cloudflare", "edge"} and top in {"fastapi", "pydantic", "numpy"} and module != "entry":
                found.append(f"{module} imports {imported}, which cannot load in the Pyodide test tier")
    return found


def test_import_rule_holds() -> None:
    assert violations() == []


def test_the_client_layer_is_in_the_matrix() -> None:
    assert layer_of("memvault.client.lazy") == "client"
    assert ALLOWED_LAYERS["client"] == {"core", "client"}
    assert (SRC / "memvault" / "client" / "__init__.py").is_file()


MCP_PACKAGE = "memvault.api.mcp"
# The local composition root and the CLI: the MCP SDK is verified on CPython only, never in Pyodide.
MAY_IMPORT_MCP_PACKAGE = {"memvault.runtime.local", "memvault.cli.serving"}


def mcp_violations() -> list[str]:
    found = []
    for path in python_files():
        module = module_name(path)
        inside = module == MCP_PACKAGE or module.startswith(f"{MCP_PACKAGE}.")
        for imported in imported_modules(path):
            if imported.split(".")[0] in {"mcp", "mcp_types"} and not inside:
                found.append(f"{module} imports the MCP SDK ({imported})")
            if imported.startswith(MCP_PACKAGE) and not inside and module not in MAY_IMPORT_MCP_PACKAGE:
                found.append(f"{module} imports {imported}")
    return found


def test_only_the_mcp_package_imports_the_sdk_and_only_local_code_imports_that_package() -> None:
    assert mcp_violations() == []


WINGS = ("memvault.core.memory", "memvault.core.brain")
# The floor's orchestrators: the nightly run tends both wings; the backup and the restore carry both;
# the caller resolver hands out memory keys and, through the brain's auth_of, brain credentials;
# the admin operations issue brain credentials through the brain's scope check.
FLOOR_MAY_IMPORT_WINGS = {
    "memvault.core.operations.maintenance",
    "memvault.core.operations.backup_pages",
    "memvault.core.operations.restore",
    "memvault.core.credentials.callers",
    "memvault.core.admin.operations",
    # The joint recall of a memory key granted brain scopes: its facts beside its conversation memory.
    "memvault.core.answers.grants",
    "memvault.core.answers.facts",
    "memvault.core.answers.joint",
    "memvault.core.answers.operations",
    "memvault.core.answers.receipts",
    "memvault.core.answers.router",
}


def wing_of(module: str) -> str | None:
    """``memory`` or ``brain`` for a module of a wing, ``floor`` for the rest of core, else None."""
    for wing in WINGS:
        if module == wing or module.startswith(f"{wing}."):
            return wing.rsplit(".", 1)[1]
    return "floor" if layer_of(module) == "core" else None


def wing_violations() -> list[str]:
    found = []
    for path in python_files():
        module = module_name(path)
        own = wing_of(module)
        if own is None:
            continue
        for imported in imported_modules(path):
            target = wing_of(imported) if imported.startswith("memvault.") else None
            if target in (None, "floor", own):
                continue
            if own == "floor" and module in FLOOR_MAY_IMPORT_WINGS:
                continue
            found.append(f"{module} ({own}) imports {imported} ({target})")
    return found


def test_the_wings_never_import_each_other_and_the_floor_imports_neither() -> None:
    assert wing_violations() == []
    assert {wing_of("memvault.core.memory.store"), wing_of("memvault.core.brain.facts")} == {"memory", "brain"}
    assert wing_of("memvault.core.sql") == "floor"


def test_no_wing_reaches_the_other_through_an_orchestrator() -> None:
    """An orchestrator imports both wings, so a wing importing one would cross by proxy."""
    found = []
    for path in python_files():
        module = module_name(path)
        if wing_of(module) in {"memory", "brain"}:
            found += [f"{module} imports {imported}" for imported in imported_modules(path) if imported in FLOOR_MAY_IMPORT_WINGS]
    assert found == []
    assert all((SRC / f"{name.replace('.', '/')}.py").is_file() for name in FLOOR_MAY_IMPORT_WINGS)


def test_the_checker_sees_a_wing_imported_by_name(tmp_path: Path) -> None:
    crossing = tmp_path / "crossing.py"
    crossing.write_text("from memvault.core import brain\nfrom memvault.core.brain.scopes import auth_of\n")
    assert {wing_of(m) for m in imported_modules(crossing)} >= {"brain"}


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


CORE = SRC / "memvault" / "core"
# Headers are parsed and written in api/; binding names live with the Workers runtime and adapters.
HEADER_WORDS = re.compile(
    r"(?i)\b(x-[a-z0-9][a-z0-9-]*|authorization|content-type|content-length|referer|cookie|user-agent|"
    r"cf-[a-z0-9-]+|anthropic-version|www-authenticate)\b"
)


def binding_names() -> set[str]:
    config = tomllib.loads((ROOT / "wrangler.toml").read_text())
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in {"binding", "name"} and isinstance(value, str) and value.isupper():
                    names.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(config)
    return names


def strings_of(path: Path) -> list[str]:
    """Every string literal of a module except docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


# The secret gate recognises credentials in any text, headers pasted into a message and words like
# "session cookie" in prose included: it names header words to find secrets after them, never to
# read or send a header.
READS_PASTED_HEADERS = CORE / "redaction"


def transport_names_in_core() -> list[str]:
    bindings = binding_names()
    found = []
    for path in sorted(CORE.rglob("*.py")):
        for text in strings_of(path):
            if HEADER_WORDS.search(text) and not path.is_relative_to(READS_PASTED_HEADERS):
                found.append(f"{module_name(path)}: header name in {text[:60]!r}")
            if text in bindings:
                found.append(f"{module_name(path)}: binding name {text!r}")
    return found


def test_core_names_no_http_header_and_no_cloudflare_binding() -> None:
    assert {"DB", "VAULT", "AI"} <= binding_names()
    assert transport_names_in_core() == []


def test_the_transport_name_check_sees_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Mentions X-Memory-Mode in prose only."""\nNAME = "x-memory-mode"\nBINDING = "VECTORIZE"\n')
    texts = strings_of(sample)
    assert texts == ["x-memory-mode", "VECTORIZE"]
    assert HEADER_WORDS.search(texts[0]) and "VECTORIZE" in binding_names()

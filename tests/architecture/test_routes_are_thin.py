"""The memory router's routes only translate: no storage or retrieval logic outside the pipeline.

Provider route handlers call the forwarding pipeline and nothing else; codecs are pure (no I/O,
no deps, no storage); only the core pipeline (``core/memory/chat_calls.py``) calls the store and search
operations, so a fix to either applies to every provider at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "memvault"
ROUTES = SRC / "api" / "routes" / "providers.py"
FORWARDING = SRC / "api" / "forwarding.py"
CODECS = sorted((SRC / "api" / "providers").glob("*.py"))
STORAGE_WORDS = {
    "vault", "vaults", "mirror", "db", "embedder", "vectors", "blobs", "cache", "search_memory",
    "store_conversation", "sql", "execute", "query",
}  # fmt: skip


def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def names_used(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def test_provider_routes_import_only_the_pipeline() -> None:
    ours = {name for name in imports(tree_of(ROUTES)) if name.startswith("memvault")}
    assert ours and all(name.startswith("memvault.api.forwarding.") for name in ours), ours


def test_provider_routes_never_touch_storage_and_stay_short() -> None:
    tree = tree_of(ROUTES)
    assert not names_used(tree) & STORAGE_WORDS
    handlers = [node for node in tree.body if isinstance(node, ast.AsyncFunctionDef)]
    assert handlers
    for handler in handlers:
        assert (handler.end_lineno or 0) - handler.lineno < 40, handler.name
        calls = {n.func.id for n in ast.walk(handler) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert calls <= {"forward_with_memory", "pass_through", "provider_for_listing", "refuse_websocket"}, (
            handler.name, calls)


@pytest.mark.parametrize("path", CODECS, ids=lambda p: p.stem)
def test_codecs_are_pure(path: Path) -> None:
    tree = tree_of(path)
    allowed_core = {
        "memvault.core.memory.chat_calls",
        "memvault.core.errors",
        "memvault.core.models",
        "memvault.core.ports",
        "memvault.core.settings",
    }
    for name in imports(tree):
        if name.startswith("memvault.core."):
            assert name.rsplit(".", 1)[0] in allowed_core, f"{path.stem} imports {name}"
        assert not name.startswith(("memvault.adapters", "memvault.runtime", "httpx", "fastapi")), name
    assert not names_used(tree) & (STORAGE_WORDS | {"deps", "Deps"}), path.stem


def test_the_forwarding_pipeline_reaches_memory_only_through_prepare_and_its_routed_call() -> None:
    tree = tree_of(FORWARDING)
    core = {name for name in imports(tree) if name.startswith("memvault.core.")}
    # Recall goes through the joint recall's prepare (conversation memory alone for a key without a
    # brain grant); the turn, its usage and its receipt through the call's journal.
    assert {"memvault.core.answers.prepare", "memvault.core.memory.routed_calls.RoutedCall"} <= core
    assert not any(
        name.startswith(("memvault.core.memory_", "memvault.core.vault", "memvault.core.memory.mirror")) for name in core
    )
    assert not names_used(tree) & {"vault", "vaults", "mirror", "embedder", "search_memory", "store_conversation"}

"""Only the write and read paths of conversation memory (``core/memory/write.py`` and
``core/memory/read/``) touch vaults or the mirror; every surface goes through them (ARCHITECTURE.md section 2)."""

from __future__ import annotations

import ast

from test_import_rule import imported_modules, module_name, python_files

STORAGE_MODULES = {"memvault.core.memory.mirror", "memvault.core.memory.store"}
STORAGE_NAMES = {"MirrorStore", "VaultStore", "vaults"}
MIRROR_WRITES = {"register", "apply", "begin_rebuild", "rebuild_rows", "finish_rebuild"}
# Who may name the storage: the two operations modules, the storage modules themselves, and the
# places that build, host or serve a vault (adapters, composition roots, the Durable Object, the
# vault operation table).
ALLOWED_PREFIXES = (
    "memvault.core.memory.write",
    "memvault.core.memory.sync",
    "memvault.core.memory.read",
    "memvault.core.memory.mirror",
    "memvault.core.memory.store",
    "memvault.core.memory.vault_table",
    "memvault.core.deps",
    "memvault.adapters.",
    "memvault.runtime.",
    "durable_objects",
)


def storage_references(path: object) -> set[str]:
    tree = ast.parse(path.read_text())  # type: ignore[attr-defined]
    found = {m for m in imported_modules(path) if m in STORAGE_MODULES}  # type: ignore[arg-type]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STORAGE_NAMES:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in STORAGE_NAMES - {"vaults"}:
            found.add(node.id)
    return found


def test_only_the_write_and_read_paths_touch_vaults_and_mirror() -> None:
    offenders = {}
    for path in python_files():
        module = module_name(path)
        if module.startswith(ALLOWED_PREFIXES):
            continue
        refs = storage_references(path)
        if refs:
            offenders[module] = sorted(refs)
    assert offenders == {}


def test_mirror_is_written_only_by_the_write_path() -> None:
    writers = set()
    for path in python_files():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in MIRROR_WRITES:
                value = node.value
                if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "MirrorStore":
                    writers.add(module_name(path))
                if isinstance(value, ast.Name) and value.id == "mirror":
                    writers.add(module_name(path))
    # The write path registers vaults; only the sync applies the vaults' logs to the mirror.
    assert writers == {"memvault.core.memory.write", "memvault.core.memory.sync"}

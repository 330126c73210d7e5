"""ARCHITECTURE.md section 3: the core floor stays readable, at most 20 modules directly in
``core/``; everything else is grouped by concept in a package (the wings ``memory/`` and
``brain/``, ``credentials/``, ``operations/``, ``redaction``)."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "src" / "memvault" / "core"
FLOOR_LIMIT = 20


def floor_modules(core: Path = CORE) -> list[str]:
    return sorted(path.stem for path in core.glob("*.py") if path.name != "__init__.py")


def test_the_core_floor_holds_at_most_twenty_modules() -> None:
    modules = floor_modules()
    assert 0 < len(modules) <= FLOOR_LIMIT, modules


def test_every_package_of_core_says_what_it_groups() -> None:
    packages = [path.parent for path in CORE.rglob("__init__.py") if "__pycache__" not in path.parts]
    assert {"credentials", "operations", "memory", "brain"} <= {p.name for p in packages}
    undocumented = [p.name for p in packages if not (p / "__init__.py").read_text().lstrip().startswith('"""')]
    assert undocumented == []


def test_the_count_sees_a_module_added_and_ignores_packages(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "one.py").write_text("")
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "two.py").write_text("")
    assert floor_modules(tmp_path) == ["one"]

"""The cache of freshly migrated local D1 databases (scripts/workers_dev.py `apply_migrations`):
wrangler applies the migrations once for what the database is made from, a project made from the
same gets a copy, and a change of a migration applies them again. wrangler is stood in for by a
function that writes the database file and counts its calls."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import workers_dev  # noqa: E402
from workers_dev import LOCAL_D1, apply_migrations  # noqa: E402


class FakeWrangler:
    def __init__(self) -> None:
        self.applied: list[Path] = []

    def __call__(self, args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
        assert args[:3] == ["d1", "migrations", "apply"]
        self.applied.append(cwd)
        database = cwd / LOCAL_D1 / "miniflare-D1DatabaseObject" / "memvault.sqlite"
        database.parent.mkdir(parents=True)
        database.write_text("\n".join(m.read_text() for m in sorted((cwd / "migrations").glob("*.sql"))))
        return ""


@pytest.fixture
def fake_wrangler(monkeypatch: pytest.MonkeyPatch) -> FakeWrangler:
    fake = FakeWrangler()
    monkeypatch.setattr(workers_dev, "wrangler", fake)
    return fake


def project(at: Path) -> Path:
    """A project with memvault's wrangler.toml and migrations; its config."""
    shutil.copytree(ROOT / "migrations", at / "migrations")
    shutil.copy2(ROOT / "wrangler.toml", at / "wrangler.toml")
    return at / "wrangler.toml"


def database(config: Path) -> str:
    return (config.parent / LOCAL_D1 / "miniflare-D1DatabaseObject" / "memvault.sqlite").read_text()


def test_a_project_made_from_the_same_migrations_gets_a_copy_and_a_changed_migration_applies_again(
        tmp_path: Path, fake_wrangler: FakeWrangler) -> None:
    cache = tmp_path / "cache"
    first = project(tmp_path / "first")
    apply_migrations(first, cache)
    second = project(tmp_path / "second")
    apply_migrations(second, cache)
    assert fake_wrangler.applied == [first.parent]
    assert database(second) == database(first) and "CREATE TABLE" in database(second)

    changed = project(tmp_path / "changed")
    newest = sorted((changed.parent / "migrations").glob("*.sql"))[-1]
    newest.write_text(newest.read_text() + "\nCREATE TABLE added_later (id TEXT);\n")
    apply_migrations(changed, cache)
    assert fake_wrangler.applied == [first.parent, changed.parent]
    assert "added_later" in database(changed)
    assert len(list(cache.iterdir())) == 1  # the database of the older migrations is gone

    # Back to the first migrations: the cache follows what a database is made from, not the last one made.
    again = project(tmp_path / "again")
    apply_migrations(again, cache)
    assert fake_wrangler.applied == [first.parent, changed.parent, again.parent]
    assert database(again) == database(first)


def test_without_a_cache_every_project_applies_and_a_cache_refuses_a_project_with_a_database(
        tmp_path: Path, fake_wrangler: FakeWrangler) -> None:
    config = project(tmp_path / "plain")
    apply_migrations(config)
    assert fake_wrangler.applied == [config.parent]
    with pytest.raises(ValueError, match="has a local D1 already"):
        apply_migrations(config, tmp_path / "cache")

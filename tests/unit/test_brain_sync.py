"""scripts/brain_sync.py against the real app in-process: push sends only what changed and
retires deleted files; pull rebuilds an empty folder and never clobbers a newer local file."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "api" / "brain"))

from brain_env import Brain, close_brain, open_brain  # noqa: E402


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("brain_sync", ROOT / "scripts" / "brain_sync.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


sync = _load_script()


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[tuple[Brain, httpx.AsyncClient]]:
    brain = await open_brain(tmp_path / "data")
    client = httpx.AsyncClient(transport=brain.transport, base_url="http://brain.test",
                               headers=brain.headers("writer"))
    try:
        yield brain, client
    finally:
        await client.aclose()
        await close_brain(brain)


def _notes(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def test_push_sends_only_changed_files_and_retires_deleted_ones(
    env: tuple[Brain, httpx.AsyncClient], tmp_path: Path
) -> None:
    brain, client = env
    notes = tmp_path / "notes"
    _notes(notes, {"a.md": "# A\nalpha", "sub/b.md": "# B\nbeta", "c.md": "# C\ngamma", "skip.txt": "not markdown"})
    first = await sync.push(client, notes, "shared")
    assert sorted(first.sent) == ["a.md", "c.md", "sub/b.md"]
    again = await sync.push(client, notes, "shared")
    assert again.sent == [] and sorted(again.unchanged) == ["a.md", "c.md", "sub/b.md"]

    (notes / "a.md").write_text("# A\nalpha, revised", encoding="utf-8")
    (notes / "c.md").unlink()
    events = await brain.events()
    third = await sync.push(client, notes, "shared")
    assert third.sent == ["a.md"] and third.retired == ["c.md"]
    assert await brain.events() - events == 3  # a.md written, its old version retired, c.md retired
    current = await brain.deps.db.query("SELECT source FROM memory WHERE superseded_at IS NULL ORDER BY source")
    assert [r["source"] for r in current] == ["files:a.md", "files:sub/b.md"]
    chain = (await brain.get("/memory/history", "reader-all",
                             id=(await brain.deps.db.query("SELECT id FROM memory WHERE source = 'files:a.md' "
                                                           "AND superseded_at IS NULL"))[0]["id"])).json()["chain"]
    assert len(chain) == 2


async def test_pull_rebuilds_an_empty_folder(env: tuple[Brain, httpx.AsyncClient], tmp_path: Path) -> None:
    _, client = env
    source = tmp_path / "source"
    long_note = "# Long\n" + "line of a long note\n" * 100
    _notes(source, {"a.md": "# A\nalpha\n", "deep/nested/b.md": long_note})
    await sync.push(client, source, "shared")
    target = tmp_path / "rebuilt"
    report = await sync.pull(client, target)
    assert sorted(report.written) == ["a.md", "deep/nested/b.md"]
    assert (target / "a.md").read_text() == "# A\nalpha\n"
    assert (target / "deep/nested/b.md").read_text() == long_note
    assert (await sync.push(client, target, "shared")).sent == []


async def test_pull_never_overwrites_a_newer_local_file_without_force(
    env: tuple[Brain, httpx.AsyncClient], tmp_path: Path
) -> None:
    brain, client = env
    source = tmp_path / "source"
    _notes(source, {"a.md": "brain version\n", "b.md": "brain b\n"})
    await sync.push(client, source, "shared")
    target = tmp_path / "local"
    _notes(target, {"a.md": "my newer local edit\n", "b.md": "stale local b\n"})
    old = brain.clock.now - 3600
    os.utime(target / "b.md", (old, old))  # older than the brain's copy: pull may replace it
    report = await sync.pull(client, target)
    assert report.kept_newer == ["a.md"] and report.written == ["b.md"]
    assert (target / "a.md").read_text() == "my newer local edit\n"
    assert (target / "b.md").read_text() == "brain b\n"
    forced = await sync.pull(client, target, force=True)
    assert forced.written == ["a.md"] and (target / "a.md").read_text() == "brain version\n"


async def test_pull_refuses_sources_that_would_escape_the_folder(
    env: tuple[Brain, httpx.AsyncClient], tmp_path: Path
) -> None:
    brain, client = env
    await brain.write({"content": "escape", "source": "files:../outside.md", "scope": "shared"})
    report = await sync.pull(client, tmp_path / "target")
    assert report.refused == ["files:../outside.md"]
    assert not (tmp_path / "outside.md").exists()


async def test_a_read_credential_cannot_push(env: tuple[Brain, httpx.AsyncClient], tmp_path: Path) -> None:
    brain, _ = env
    reader = httpx.AsyncClient(transport=brain.transport, base_url="http://brain.test",
                               headers=brain.headers("reader-all"))
    _notes(tmp_path / "n", {"a.md": "x"})
    with pytest.raises(SystemExit):
        await sync.push(reader, tmp_path / "n", "shared")
    await reader.aclose()
    assert await brain.count() == 0

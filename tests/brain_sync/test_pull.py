"""brain_sync pull decides by content hashes against the manifest, never by clocks: work done in
the folder and not yet pushed is never overwritten without --force, whatever its mtime says."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import httpx
import sync_env  # noqa: F401  (puts scripts/ on the path first)
from sync_env import pull_folder, push_folder, served, snapshot, write

LONG_AGO = 946_684_800.0  # 2000-01-01: older than anything the brain holds


def backdate(path: Path) -> None:
    os.utime(path, (LONG_AGO, LONG_AGO))


async def test_pull_rebuilds_an_empty_folder_that_pushes_back_unchanged(tmp_path: Path) -> None:
    source = tmp_path / "source"
    long_note = "# Long\n" + "line of a long note\n" * 100
    write(source, {".brain-sync.toml": '[paths."family/"]\nscope = "family"\n', "a.md": "# A\nalpha\n",
                   "deep/nested/b.md": long_note, "family/c.md": "Family dinner on Sunday.\n",
                   "d.md": "---\nscope: personal\ntitle: Running\n---\n\nRun on Mondays.\n"})
    with served(tmp_path / "data") as server:
        await push_folder(server, source)
        target = tmp_path / "rebuilt"
        report = await pull_folder(server, target)
        assert sorted(report.paths("written")) == ["a.md", "d.md", "deep/nested/b.md", "family/c.md"]
        assert (target / "a.md").read_text() == "# A\nalpha\n"
        assert (target / "deep/nested/b.md").read_text() == long_note
        # Without the folder's path map here, front matter says where each note lives.
        assert (target / "family/c.md").read_text() == "---\nscope: family\n---\n\nFamily dinner on Sunday.\n"
        assert (target / "d.md").read_text() == "---\nscope: personal\n---\n\nRun on Mondays.\n"
        assert (await push_folder(server, target)).paths("sent") == []
        assert (await pull_folder(server, target)).paths("written") == []


async def test_local_work_with_an_older_mtime_is_kept_and_the_conflict_reported(tmp_path: Path) -> None:
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    write(laptop, {"a.md": "Plan v1.\n", "b.md": "List v1.\n", "c.md": "Ideas v1.\n", "d.md": "Log v1.\n",
                   "e.md": "Old note.\n"})
    with served(tmp_path / "data") as server:
        await push_folder(server, laptop)
        await pull_folder(server, desktop)
        write(laptop, {"a.md": "Plan v2 from the laptop.\n", "b.md": "List v2 from the laptop.\n"})
        (laptop / "e.md").unlink()
        await push_folder(server, laptop)

        write(desktop, {"a.md": "Plan v2 from the desktop.\n", "c.md": "Ideas v2, not pushed yet.\n"})
        for name in ("a.md", "b.md", "c.md"):
            backdate(desktop / name)  # a clock gone wrong: the edits look older than the brain's copies
        (desktop / "d.md").unlink()
        report = await pull_folder(server, desktop)

        assert report.paths("conflict") == ["a.md"]
        local_hash = hashlib.sha256(b"Plan v2 from the desktop.\n").hexdigest()
        brain_hash = server.current()["files:a.md"]["content_hash"]
        assert report.detail("conflict", "a.md") == (
            f"changed here and in the brain (local {local_hash[:12]}, brain {brain_hash[:12]}): "
            "push --force keeps yours, pull --force takes the brain's")
        assert (desktop / "a.md").read_text() == "Plan v2 from the desktop.\n"
        assert report.paths("kept") == ["c.md", "d.md"]
        assert (desktop / "c.md").read_text() == "Ideas v2, not pushed yet.\n" and not (desktop / "d.md").exists()
        assert report.paths("written") == ["b.md"] and (desktop / "b.md").read_text() == "List v2 from the laptop.\n"
        assert report.paths("removed") == ["e.md"] and not (desktop / "e.md").exists()
        assert report.exit_status() == 1

        # Pushing the conflicting file is refused too; pushing the rest sends c.md and retires d.md.
        pushed = await push_folder(server, desktop)
        assert pushed.paths("conflict") == ["a.md"] and pushed.paths("sent") == ["c.md"]
        assert pushed.paths("retired") == ["d.md"]
        assert server.current()["files:a.md"]["content"] == "Plan v2 from the laptop."

        forced = await pull_folder(server, desktop, force=True)
        assert forced.paths("written") == ["a.md"] and (desktop / "a.md").read_text() == "Plan v2 from the laptop.\n"
        assert (await pull_folder(server, desktop)).exit_status() == 0


async def test_push_force_replaces_the_brains_copy(tmp_path: Path) -> None:
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    write(laptop, {"a.md": "v1\n"})
    with served(tmp_path / "data") as server:
        await push_folder(server, laptop)
        await pull_folder(server, desktop)
        write(laptop, {"a.md": "v2 laptop\n"})
        await push_folder(server, laptop)
        write(desktop, {"a.md": "v2 desktop\n"})
        assert (await push_folder(server, desktop)).paths("conflict") == ["a.md"]
        forced = await push_folder(server, desktop, force=True)
        assert forced.paths("sent") == ["a.md"] and server.current()["files:a.md"]["content"] == "v2 desktop"
        assert (await pull_folder(server, laptop)).paths("written") == ["a.md"]
        assert (laptop / "a.md").read_text() == "v2 desktop\n"


async def test_pull_writes_nothing_outside_the_folder_or_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"target.md": "untouched\n"})
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "linked.md").symlink_to(outside / "target.md")
    (folder / "dir").symlink_to(outside, target_is_directory=True)
    (folder / "box.md").mkdir()
    with served(tmp_path / "data") as server:
        for source in ("files:../escape.md", "files:linked.md", "files:dir/target.md", "files:/etc/x.md",
                       "files:private/pin.md", "files:box.md"):
            written = httpx.post(f"{server.url}/v1/brain/facts", headers=server.headers(), timeout=30,
                                 json={"content": f"from {source}", "source": source, "scope": "shared"})
            assert written.status_code == 200, written.text
        before = snapshot(tmp_path / "outside")
        report = await pull_folder(server, folder)
        assert sorted(report.paths("refused")) == ["../escape.md", "/etc/x.md", "box.md", "dir/target.md",
                                                   "linked.md"]
        assert report.paths("excluded") == ["private/pin.md"]
        assert snapshot(tmp_path / "outside") == before and not (tmp_path / "escape.md").exists()
        assert sorted(snapshot(folder)) == ["dir", "linked.md"] and (folder / "box.md").is_dir()

"""Skills travel as skills/<slug>/SKILL.md (pull exports them, push registers them through
POST /v1/brain/skills), and --dry-run prints what either direction would do while changing
nothing: no request that writes, no file, the manifest untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import sync_env  # noqa: F401  (puts scripts/ on the path first)
from brain_folder.placement import Placer
from brain_folder.pull import pull
from brain_folder.push import push
from sync_env import brain_of, doc_blocks, pull_folder, push_folder, run_script, served, snapshot, write

PAY = {"slug": "pay-invoice", "scope": "business", "name": "Pay an invoice",
       "description": "Use when: paying an invoice, settling a bill, a supplier asks to be paid",
       "content": "1. Check the invoice against the ledger.\n2. Pay by bank transfer."}


async def test_skills_round_trip_through_skill_md_files(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    with served(tmp_path / "data") as server:
        server.register_skill(**PAY)
        server.register_skill(slug="pay-invoice", scope="family", content="Ask who paid last time.")
        report = await pull_folder(server, folder)
        assert sorted(report.paths("written")) == ["skills/pay-invoice@business/SKILL.md",
                                                   "skills/pay-invoice@family/SKILL.md"]
        _, shown = doc_blocks("text")  # the page shows what pull writes
        assert (folder / "skills/pay-invoice@business/SKILL.md").read_text() == shown
        assert (await push_folder(server, folder)).paths("sent") == []

        write(folder, {"skills/pay-invoice@business/SKILL.md":
                       (folder / "skills/pay-invoice@business/SKILL.md").read_text() + "3. File the receipt.\n",
                       "skills/book-travel/SKILL.md": "---\nname: book-travel\ndescription: Use when booking trips\n"
                                                      "---\n1. Check the calendar.\n2. Book refundable fares.\n"})
        pushed = await push_folder(server, folder, scope="personal")
        assert sorted(pushed.paths("sent")) == ["skills/book-travel/SKILL.md", "skills/pay-invoice@business/SKILL.md"]
        assert "version 2" in pushed.detail("sent", "skills/pay-invoice@business/SKILL.md")
        listed = {(s["slug"], s["scope"]): s for s in server.skills()}
        assert listed["pay-invoice", "business"]["version"] == 2
        assert listed["book-travel", "personal"]["description"] == "Use when booking trips"

        elsewhere = tmp_path / "elsewhere"
        await pull_folder(server, elsewhere)
        text = (elsewhere / "skills/pay-invoice@business/SKILL.md").read_text()
        assert "version: 2" in text and text.endswith("2. Pay by bank transfer.\n3. File the receipt.\n")
        assert "name: book-travel" in (elsewhere / "skills/book-travel/SKILL.md").read_text()
        assert (await push_folder(server, elsewhere)).paths("sent") == []

        (elsewhere / "skills/book-travel/SKILL.md").unlink()
        kept = await push_folder(server, elsewhere)
        assert kept.paths("kept") == ["skills/book-travel/SKILL.md"] and ("book-travel", "personal") in {
            (s["slug"], s["scope"]) for s in server.skills()}
        pulled = await pull_folder(server, elsewhere)
        assert pulled.detail("kept", "skills/book-travel/SKILL.md") == (
            "deleted here; skills stay in the brain, pull --force restores it")
        assert (await pull_folder(server, elsewhere, force=True)).paths("written") == ["skills/book-travel/SKILL.md"]


async def test_a_folder_synced_by_the_earlier_script_carries_on(tmp_path: Path) -> None:
    """The earlier script kept a version-1 manifest (the files' hashes alone) and pushed SKILL.md
    files as notes: the skill takes over its path and the note goes."""
    folder = tmp_path / "notes"
    skill_text = "---\nname: water-plants\ndescription: Use when the plants look dry\n---\nWater them.\n"
    write(folder, {"a.md": "Alpha.\n", "skills/water-plants/SKILL.md": skill_text})
    with served(tmp_path / "data") as server:
        for relative in ("a.md", "skills/water-plants/SKILL.md"):
            sent = httpx.post(f"{server.url}/v1/brain/facts", headers=server.headers(), timeout=30, json={
                "source": f"files:{relative}", "scope": "shared", "entry_type": "reference", "reconcile": True,
                "facts": [{"content": (folder / relative).read_text()}]})
            assert sent.status_code == 200, sent.text
        (folder / ".brain-sync.json").write_text(json.dumps({"version": 1, "files": {
            relative: hashlib.sha256((folder / relative).read_bytes()).hexdigest()
            for relative in ("a.md", "skills/water-plants/SKILL.md")}}))
        pushed = await push_folder(server, folder)
        assert pushed.paths("sent") == ["skills/water-plants/SKILL.md"]
        assert pushed.paths("retired") == ["skills/water-plants/SKILL.md"] and pushed.paths("unchanged") == ["a.md"]
        assert sorted(server.current()) == ["files:a.md", "skill:shared/water-plants"]
        assert (await pull_folder(server, folder)).paths("written") == []

        (folder / ".brain-sync.json").write_text("{not json")
        ran = run_script("push", str(folder), "--url", server.url)
        assert ran.returncode == 2 and "is not a manifest brain_sync can read" in ran.stderr


class WritesRecorded(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.methods: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.methods.append(request.method)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_dry_run_prints_what_would_happen_and_changes_nothing(tmp_path: Path) -> None:
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    write(laptop, {"keep.md": "Kept as is.\n", "edit.md": "Edit me.\n", "gone.md": "Delete me.\n",
                   "hide.md": "Exclude me later.\n", "skills/tidy/SKILL.md": "---\nname: tidy\n---\nPut it away.\n"})
    with served(tmp_path / "data") as server:
        await push_folder(server, laptop)
        await pull_folder(server, desktop)
        write(laptop, {"edit.md": "Edited.\n", "new.md": "Brand new.\n", ".brain-sync-ignore": "hide.md\n",
                       "skills/tidy/SKILL.md": "---\nname: tidy\n---\nPut it away, then dust.\n"})
        (laptop / "gone.md").unlink()
        export, folder = server.export(), snapshot(laptop)

        recorded = WritesRecorded()
        async with brain_of(server, transport=recorded) as brain:
            planned = await push(brain, laptop, Placer(laptop, "shared", "reference"), dry_run=True)
        assert set(recorded.methods) == {"GET"}
        assert server.export() == export and snapshot(laptop) == folder
        ran = run_script("push", str(laptop), "--url", server.url, "--dry-run")
        assert ran.returncode == 0, ran.stderr
        assert server.export() == export and snapshot(laptop) == folder
        assert ran.stdout.splitlines() == [
            "dry run: nothing was sent, retired or written",
            "excluded: hide.md (excluded)",
            "would send: edit.md (scope shared, type reference)",
            "would send: new.md (scope shared, type reference)",
            "would send: skills/tidy/SKILL.md (skill tidy, scope shared)",
            "would retire: gone.md (deleted here)",
            "would retire: hide.md (now excluded)",
            '{"excluded": 1, "retired": 2, "sent": 3, "unchanged": 1}',
        ]
        done = await push_folder(server, laptop)
        assert [(e.kind, e.path) for e in done.entries if e.kind != "unchanged"] == [
            (e.kind, e.path) for e in planned.entries if e.kind != "unchanged"]

        write(desktop, {"keep.md": "Changed on the desktop.\n"})
        export, folder = server.export(), snapshot(desktop)
        recorded = WritesRecorded()
        async with brain_of(server, transport=recorded) as brain:
            planned = await pull(brain, desktop, Placer(desktop, "shared", "reference"), dry_run=True)
        assert set(recorded.methods) == {"GET"} and snapshot(desktop) == folder and server.export() == export
        ran = run_script("pull", str(desktop), "--url", server.url, "--dry-run")
        assert ran.returncode == 0 and snapshot(desktop) == folder
        assert ran.stdout.splitlines() == [
            "dry run: nothing was sent, retired or written",
            "would write: edit.md",
            "kept: keep.md (changed here since the last sync; push sends it)",
            "would write: new.md",
            "would remove: gone.md (retired in the brain)",
            "would remove: hide.md (retired in the brain)",
            "would write: skills/tidy/SKILL.md",
            '{"kept": 1, "removed": 2, "written": 3}',
        ]
        assert not (tmp_path / "never").exists()
        assert run_script("pull", str(tmp_path / "never"), "--url", server.url, "--dry-run").returncode == 0
        assert not (tmp_path / "never").exists()

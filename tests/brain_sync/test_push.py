"""brain_sync push: only what changed is sent, each file under the scope and type its front
matter, the folder's path map or the command line gives it; a file the credential may not write
is refused alone; and an interrupted push leaves a manifest that claims nothing the brain lacks."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import sync_env  # noqa: F401  (puts scripts/ on the path first)
from brain_folder.placement import Placer
from brain_folder.push import push
from sync_env import Server, brain_of, doc_blocks, push_folder, served, write

(PATH_MAP,) = doc_blocks("toml")
FRONT_MATTER, _ = doc_blocks("text")


def manifest(folder: Path) -> dict[str, dict[str, str]]:
    files: dict[str, dict[str, str]] = json.loads((folder / ".brain-sync.json").read_text())["files"]
    return files


def assert_manifest_matches_the_brain(server: Server, folder: Path) -> None:
    """Every file the manifest calls synced is what the brain holds for it now."""
    current = server.current()
    for relative, synced in manifest(folder).items():
        assert current[f"files:{relative}"]["content_hash"] == synced["brain"], relative


async def test_push_sends_what_changed_and_retires_what_was_deleted(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, {"a.md": "# A\nalpha", "sub/b.md": "# B\nbeta", "c.md": "# C\ngamma", "skip.txt": "not markdown"})
    with served(tmp_path / "data") as server:
        first = await push_folder(server, folder)
        assert sorted(first.paths("sent")) == ["a.md", "c.md", "sub/b.md"]
        again = await push_folder(server, folder)
        assert again.paths("sent") == [] and sorted(again.paths("unchanged")) == ["a.md", "c.md", "sub/b.md"]
        (folder / "a.md").write_text("# A\nalpha, revised", encoding="utf-8")
        (folder / "c.md").unlink()
        third = await push_folder(server, folder)
        assert third.paths("sent") == ["a.md"] and third.paths("retired") == ["c.md"]
        current = server.current()
        assert sorted(current) == ["files:a.md", "files:sub/b.md"]
        assert current["files:a.md"]["content"] == "# A\nalpha, revised"
        assert sorted(manifest(folder)) == ["a.md", "sub/b.md"]
        assert_manifest_matches_the_brain(server, folder)


async def test_scope_and_type_come_from_front_matter_then_the_path_map_then_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, {
        ".brain-sync.toml": PATH_MAP,
        "plain.md": "A plain note.",
        "tea.md": FRONT_MATTER,
        "family/tea.md": "Aunt Mildred takes her tea black.",
        "family/own.md": "---\nscope: personal\ntype: user\n---\n\nI prefer window seats.",
        "work/ledger.md": "The ledger closes on the fifth.",
        "work/clients/acme.md": "Acme pays net 30.",
        "work/clients/typed.md": "---\nentry_type: feedback\n---\nShorter invoices, please.",
        "muddled.md": "---\ntype: user\nentry_type: project\n---\nWhich is it?",
    })
    with served(tmp_path / "data") as server:
        report = await push_folder(server, folder, scope="shared", entry_type="reference")
        assert report.paths("refused") == ["muddled.md"]
        assert "type and entry_type disagree" in report.detail("refused", "muddled.md")
        placed = {source: (row["scope"], row["entry_type"]) for source, row in server.current().items()}
        assert placed == {
            "files:plain.md": ("shared", "reference"),
            "files:tea.md": ("family", "user"),
            "files:family/tea.md": ("family", "reference"),
            "files:family/own.md": ("personal", "user"),
            "files:work/ledger.md": ("business", "reference"),
            "files:work/clients/acme.md": ("business", "project"),
            "files:work/clients/typed.md": ("business", "feedback"),
        }
        assert server.current()["files:family/own.md"]["content"] == "I prefer window seats."
        assert server.current()["files:tea.md"]["content"] == "Aunt Mildred takes her tea black."

        # Moving a note to another scope moves it: the old scope no longer holds it.
        write(folder, {"family/own.md": "---\nscope: family\ntype: user\n---\n\nWe all prefer window seats."})
        moved = await push_folder(server, folder)
        assert moved.paths("sent") == ["family/own.md"]
        assert server.current()["files:family/own.md"]["scope"] == "family"
        assert [row["scope"] for row in server.export() if row["source"] == "files:family/own.md"] == [
            "personal", "family"]
        # With its text unchanged too: each scope holds its own version of the note.
        write(folder, {"family/own.md": "---\nscope: personal\ntype: user\n---\n\nWe all prefer window seats."})
        back = await push_folder(server, folder)
        assert back.paths("sent") == ["family/own.md"] and "family/own.md" not in back.paths("refused")
        assert server.current()["files:family/own.md"]["scope"] == "personal"
        assert [(row["scope"], row["current"]) for row in server.export()
                if row["source"] == "files:family/own.md"] == [("personal", False), ("family", False), ("personal", True)]


async def test_a_scope_the_credential_cannot_write_is_refused_for_that_file_alone(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, {"home.md": "---\nscope: family\n---\nThe spare key is with the neighbours.",
                   "deal.md": "---\nscope: business\n---\nThe Q3 deal closes Friday.",
                   "shared.md": "Bins go out on Tuesday."})
    with served(tmp_path / "data") as server:
        report = await push_folder(server, folder, name="family+shared-writer")
        assert sorted(report.paths("sent")) == ["home.md", "shared.md"]
        assert report.paths("refused") == ["deal.md"] and report.detail("refused", "deal.md").startswith("403")
        assert report.exit_status() == 1
        assert sorted(server.current()) == ["files:home.md", "files:shared.md"]
        assert sorted(manifest(folder)) == ["home.md", "shared.md"]

        reader = await push_folder(server, folder, name="reader")
        assert reader.paths("refused") == ["deal.md"] and reader.paths("sent") == []


class DropsTheLineAfter(httpx.AsyncBaseTransport):
    """The network between the script and the real server, lost after ``writes`` requests that
    write; with ``applied`` the server receives the next one and only its answer is lost."""

    def __init__(self, writes: int, applied: bool) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.writes, self.applied = writes, applied

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            if self.writes == 0:
                if self.applied:
                    response = await self.inner.handle_async_request(request)
                    await response.aread()
                raise httpx.ReadError("the connection dropped")
            self.writes -= 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_push_cut_off_half_way_leaves_a_manifest_true_to_the_brain(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, {f"n{i}.md": f"Note number {i}." for i in range(6)})
    with served(tmp_path / "data") as server:
        for applied, writes in ((False, 2), (True, 1)):
            async with brain_of(server, transport=DropsTheLineAfter(writes, applied)) as brain:
                report = await push(brain, folder, Placer(folder, "shared", "reference"))
            assert report.stopped and "could not be reached" in report.stopped and report.exit_status() == 2
            assert_manifest_matches_the_brain(server, folder)
        assert sorted(manifest(folder)) == ["n0.md", "n1.md", "n2.md"]
        assert "files:n3.md" in server.current()  # its answer was lost, so the manifest does not know it yet

        finished = await push_folder(server, folder)
        assert sorted(finished.paths("sent")) == ["n4.md", "n5.md"] and finished.paths("unchanged")[-1] == "n3.md"
        assert sorted(manifest(folder)) == [f"n{i}.md" for i in range(6)]
        assert_manifest_matches_the_brain(server, folder)

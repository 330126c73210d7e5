"""What brain_sync leaves out: dotfiles, names holding "private" or "secret" in any case, the
folder's .brain-sync-ignore (gitignore syntax), and symbolic links. Left-out files are never
opened, never sent, reported, and retired from the brain once they are excluded after a push."""

from __future__ import annotations

import os
from pathlib import Path

import sync_env  # noqa: F401  (puts scripts/ on the path first)
from brain_folder.folder import walk
from sync_env import push_folder, run_script, served, write


def test_the_defaults_leave_out_dotfiles_and_private_or_secret_names_in_any_case(tmp_path: Path) -> None:
    write(tmp_path, {name: "x" for name in [
        "plain.md", "Secret-notes.md", "my.private.md", "PRIVATE.md", "Private/a.md", "deep/secrets/b.md",
        "deep/TopSecret.md", ".env.md", ".obsidian/workspace.md", "a/b/.hidden/c.md", "privacy.md",
        "skills/pay/SKILL.md", "skills/private-thing/SKILL.md", "notes.txt",
    ]})
    listing = walk(tmp_path)
    assert sorted(listing.notes) == ["plain.md", "privacy.md"]
    assert sorted(listing.skills) == ["skills/pay/SKILL.md"]
    assert sorted(listing.excluded) == [
        ".env.md", ".obsidian/", "PRIVATE.md", "Private/", "Secret-notes.md", "a/b/.hidden/", "deep/TopSecret.md",
        "deep/secrets/", "my.private.md", "skills/private-thing/",
    ]


def test_the_ignore_file_speaks_gitignore(tmp_path: Path) -> None:
    write(tmp_path, {
        ".brain-sync-ignore": "# drafts stay here\ndrafts/\n**/tmp-*.md\n/top.md\n*.log.md\n!keep.log.md\n"
                              "!my-secret-recipe.md\n\n",
        "drafts/a.md": "x", "sub/drafts/b.md": "x", "x/y/tmp-1.md": "x", "tmp-2.md": "x", "top.md": "x",
        "sub/top.md": "x", "run.log.md": "x", "keep.log.md": "x", "my-secret-recipe.md": "x", "other-secret.md": "x",
    })
    listing = walk(tmp_path)
    assert sorted(listing.notes) == ["keep.log.md", "my-secret-recipe.md", "sub/top.md"]
    assert sorted(listing.excluded) == ["drafts/", "other-secret.md", "run.log.md", "sub/drafts/", "tmp-2.md",
                                        "top.md", "x/y/tmp-1.md"]


def test_symbolic_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"diary.md": "outside the folder", "more/notes.md": "outside too"})
    folder = tmp_path / "notes"
    write(folder, {"a.md": "inside"})
    (folder / "diary.md").symlink_to(outside / "diary.md")
    (folder / "linked").symlink_to(outside / "more", target_is_directory=True)
    (folder / "alias.md").symlink_to(folder / "a.md")
    listing = walk(folder)
    assert list(listing.notes) == ["a.md"]
    assert listing.excluded == {"alias.md": "symbolic link, not followed", "diary.md": "symbolic link, not followed",
                                "linked/": "symbolic link, not followed"}


async def test_excluded_files_never_reach_the_brain_and_are_retired_once_excluded(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    write(folder, {"plan.md": "The garden plan: tomatoes.", "journal.md": "Journal: moved the desk.",
                   "private/bank.md": "PIN hint: the dog's birthday", "Secret-santa.md": "Aunt gets socks",
                   ".trash/old.md": "old draft"})
    with served(tmp_path / "data") as server:
        first = await push_folder(server, folder)
        assert sorted(first.paths("sent")) == ["journal.md", "plan.md"]
        assert sorted(first.paths("excluded")) == [".trash/", "Secret-santa.md", "private/"]
        texts = " ".join(row["content"] for row in server.export())
        assert "PIN hint" not in texts and "socks" not in texts and "old draft" not in texts

        write(folder, {".brain-sync-ignore": "journal.md\n"})
        second = await push_folder(server, folder)
        assert second.paths("retired") == ["journal.md"] and second.detail("retired", "journal.md") == "now excluded"
        assert sorted(server.current()) == ["files:plan.md"]
        assert "journal.md" not in (folder / ".brain-sync.json").read_text()
        again = await push_folder(server, folder)
        assert again.paths("retired") == [] and again.paths("sent") == []


def test_an_excluded_file_is_never_opened(tmp_path: Path) -> None:
    """A named pipe blocks whoever opens it for reading, so the script finishes only if it never does."""
    folder = tmp_path / "notes"
    write(folder, {"a.md": "a note"})
    os.mkfifo(folder / "private.md")
    os.mkfifo(folder / ".draft.md")
    with served(tmp_path / "data") as server:
        ran = run_script("push", str(folder), "--url", server.url)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "excluded: private.md" in ran.stdout and "sent: a.md" in ran.stdout
        assert sorted(server.current()) == ["files:a.md"]


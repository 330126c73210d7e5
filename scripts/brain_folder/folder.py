"""What of a notes folder may reach the brain. Excluded files are never opened: the walk decides
from names alone, never follows a symbolic link, and reports what it left out and why.

Exclusion is gitignore syntax (patterns, ``!`` negation, ``dir/``, ``**``, anchored ``/x``,
comments), read from ``.brain-sync-ignore`` in the folder after the defaults below, so a line
there can re-include (``!``) what a default leaves out."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

IGNORE_FILE = ".brain-sync-ignore"
# Dotfiles and dot-directories, and any file or directory whose name holds "private" or "secret"
# in any case: a folder's private notes stay out unless the ignore file lets them in.
DEFAULT_EXCLUDES = (".*", "*[pP][rR][iI][vV][aA][tT][eE]*", "*[sS][eE][cC][rR][eE][tT]*")
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"


@dataclass
class Listing:
    """The folder's notes and skill files (relative POSIX path -> path), and what was left out."""

    notes: dict[str, Path] = field(default_factory=dict)
    skills: dict[str, Path] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)


class Exclusion:
    def __init__(self, folder: Path) -> None:
        lines = list(DEFAULT_EXCLUDES)
        ignore = folder / IGNORE_FILE
        if ignore.is_file() and not ignore.is_symlink():
            lines += ignore.read_text(encoding="utf-8").splitlines()
        self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def excludes(self, relative: str, directory: bool = False) -> bool:
        """Whether ``relative`` (a POSIX path inside the folder) or one of its directories is excluded."""
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if self._spec.match_file("/".join(parts[:depth]) + "/"):
                return True
        return bool(self._spec.match_file(relative + ("/" if directory else "")))


def is_skill_path(relative: str) -> bool:
    """``skills/<name>/SKILL.md``: a skill; any other markdown file is a note."""
    parts = relative.split("/")
    return len(parts) == 3 and parts[0] == SKILLS_DIR and parts[2] == SKILL_FILE


def walk(folder: Path) -> Listing:
    exclusion = Exclusion(folder)
    listing = Listing()
    for directory, subdirs, files in os.walk(folder, followlinks=False):
        base = Path(directory).relative_to(folder).as_posix()
        prefix = "" if base == "." else base + "/"
        kept = []
        for name in sorted(subdirs):
            relative = prefix + name
            if os.path.islink(os.path.join(directory, name)):
                listing.excluded[relative + "/"] = "symbolic link, not followed"
            elif exclusion.excludes(relative, directory=True):
                listing.excluded[relative + "/"] = "excluded directory"
            else:
                kept.append(name)
        subdirs[:] = kept
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            relative, path = prefix + name, Path(directory) / name
            if path.is_symlink():
                listing.excluded[relative] = "symbolic link, not followed"
            elif exclusion.excludes(relative):
                listing.excluded[relative] = "excluded"
            elif is_skill_path(relative):
                listing.skills[relative] = path
            else:
                listing.notes[relative] = path
    return listing


def writable_path(folder: Path, relative: str) -> Path | None:
    """Where pull may write ``relative``: inside the folder, through no symbolic link; else None."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or "\\" in relative or any(p in ("", ".", "..") for p in parts):
        return None
    current = folder
    for part in parts:
        current = current / part
        if current.is_symlink():
            return None
    return current


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.brain-sync-tmp")
    temp.write_bytes(data)
    os.replace(temp, path)

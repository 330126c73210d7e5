"""Shared by the bot's notes tests (local and workerd): a family's folder of markdown notes
(`tests/data/brain_notes/`), pushed to memvault with `scripts/brain_sync.py` as its docs show, and
the questions whose answers live only in those notes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "tests" / "data" / "brain_notes"
# family/ and home/ go to the family scope by the folder's .brain-sync.toml, health/ and finances/
# by their front matter, work/ to business; the rest to the command line's default, shared.
GRANTED_SCOPES = ("family", "shared")
NOTES_WRITER_SCOPES = ("business", "family", "personal", "shared")


@dataclass(frozen=True)
class Question:
    text: str
    answer: tuple[str, ...]  # each must reach the model, and none is in the question

    def holds_no_answer(self) -> bool:
        asked = set(re.findall(r"\w+", self.text.lower()))
        return not any(set(re.findall(r"\w+", part.lower())) & asked for part in self.answer)


# Each answer is in one note and nowhere else the bot could have it from.
QUESTIONS = (
    Question("When does the recycling bin go out?", ("Tuesday",)),
    Question("When is the car's MOT due?", ("9 March 2027",)),
    Question("When is Tomas's appointment with the orthodontist?", ("10 December", "15:40")),
    Question("How long does the lasagne bake in the oven?", ("45 minutes",)),
    Question("What hotel did we book for the Lisbon trip?", ("Miradouro",)),
)
# A business note: the bot's key is not granted that scope.
WALLED = Question("Who is the client contact for Project Heron?", ("Ramaswamy",))
# A note in private/: brain_sync never sends it.
EXCLUDED = Question("Where would I walk on a sabbatical?", ("Camino",))
REMEMBERED = "The piano tuner, Mr. Adeyemi, comes on 12 January at 11:00"
ABOUT_REMEMBERED = Question("When does the piano tuner come?", ("Adeyemi", "12 January"))


def note_count() -> int:
    return sum(1 for path in NOTES.rglob("*.md") if "private" not in path.relative_to(NOTES).parts)


def push_notes(url: str, writer_token: str, work: Path) -> str:
    """`brain_sync.py push` of a copy of the notes (push writes its manifest into the folder), as
    docs/brain-sync.md runs it; its output."""
    folder = work / "notes"
    shutil.copytree(NOTES, folder)
    env = {**os.environ, "MEMVAULT_URL": url, "MEMVAULT_BRAIN_TOKEN": writer_token}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "brain_sync.py"), "push", str(folder), "--scope", "shared"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout

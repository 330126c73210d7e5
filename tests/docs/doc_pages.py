"""The README and the pages of docs/ as a reader sees them: their fenced code blocks, each with the
heading it stands under and its info string, for the tests that run or check them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# A block's info string names its language; a second word `cloudflare` marks a block that needs a
# Cloudflare account, which the suite checks statically instead of running.
RUNNABLE = {"sh", "bash", "python", "js", "ts", "typescript"}
DATA = {"json", "jsonl", "text", "toml"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`]*)$")
HEADING = re.compile(r"^#{1,6} (?P<title>.+?)\s*$")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Block:
    page: Path
    section: str  # the heading the block stands under
    info: str
    text: str

    @property
    def kind(self) -> str:
        return self.info.split()[0] if self.info else ""

    @property
    def cloudflare(self) -> bool:
        return "cloudflare" in self.info.split()[1:]

    @property
    def runs_locally(self) -> bool:
        return self.kind in RUNNABLE and not self.cloudflare

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)} ({self.section})"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, its text dedented by its fence's indent (a block in a list)."""
    found: list[Block] = []
    section = ""
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        heading = HEADING.match(line)
        if heading:
            section = heading["title"]
        elif fence:
            indent, body = len(fence["indent"]), []
            index += 1
            while lines[index].strip() != "```":
                body.append(lines[index][indent:])
                index += 1
            found.append(Block(page, section, fence["info"].strip(), "\n".join(body) + "\n"))
        index += 1
    return found


def blocks_under(page: Path, section: str) -> list[Block]:
    found = [block for block in blocks(page) if block.section == section]
    assert found, f"{page.name} has no code block under {section!r}"
    return found


def prose(page: Path) -> str:
    """A page's text outside its code blocks."""
    return re.sub(r"^ *```.*?^ *```$", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)

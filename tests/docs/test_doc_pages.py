"""Every page of the README and docs/ as a whole: each code block is run by a test, checked as data,
or marked as needing a Cloudflare account and checked statically (its commands and flags exist in
the pinned wrangler, pywrangler and our scripts); every link leads somewhere; no sentence is said
twice."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from doc_pages import DATA, DOCS, ROOT, RUNNABLE, Block, blocks, pages, prose

sys.path.insert(0, str(ROOT / "tests"))
from node_tools import node_env

# The tests that run each section's blocks, as they run them (each reads its blocks from the page).
RUN_BY: dict[tuple[str, str], str] = {
    ("README.md", "Two commands"): "tests/docs/test_readme.py",
    ("README.md", "A first memory"): "tests/docs/test_readme.py",
    ("README.md", "Memory for an OpenAI app"): "tests/docs/test_readme.py",
    ("brain.md", "Walls"): "tests/docs/test_doc_commands.py",
    ("brain-sync.md", "Push and pull"): "tests/docs/test_doc_commands.py",
    ("cli.md", "A first session"): "tests/cli/test_cli_reference.py",
    ("clients.md", "Over HTTP from Python"): "tests/docs/test_doc_commands.py",
    ("providers.md", "Pointing each SDK at memvault"): "tests/api/providers/test_docs_snippets.py",
    ("providers.md", "Gemini from JavaScript and from curl"): "tests/api/providers/test_docs_snippets.py",
    # The recipe's steps run through scripts/workers_dev.py's own functions, its curl from the README.
    ("workerd.md", "`wrangler dev` locally"): "tests/workerd/test_workerd_snapshot.py",
    ("typescript.md", "Types generated from memvault's own definitions"): "tests/unit/test_typescript_contract.py",
}
WRANGLER = ROOT / "node_modules" / ".bin" / "wrangler"
PYWRANGLER = ROOT / ".venv" / "bin" / "pywrangler"


def every_block() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def test_every_block_says_what_it_is() -> None:
    unknown = [b.where for b in every_block() if b.kind not in RUNNABLE | DATA]
    assert unknown == []


def test_every_block_that_runs_locally_is_run_by_a_test() -> None:
    sections = {(b.page.name, b.section) for b in every_block() if b.runs_locally}
    assert sections == set(RUN_BY)
    for (page, section), test in RUN_BY.items():
        assert (ROOT / test).is_file(), test
        source = (ROOT / test).read_text()
        assert page in source or page.removesuffix(".md") in source, (page, test)
        assert section in source, (section, test)


def test_every_json_block_parses() -> None:
    for block in every_block():
        if block.kind == "json":
            json.loads(block.text)
        elif block.kind == "jsonl":
            [json.loads(line) for line in block.text.splitlines()]


@cache
def wrangler_help(words: tuple[str, ...]) -> str:
    done = subprocess.run([str(WRANGLER), *words, "--help"], cwd=ROOT, env=node_env(), capture_output=True,
                          text=True, timeout=300)
    return done.stdout + done.stderr


@cache
def help_of(command: tuple[str, ...]) -> str:
    done = subprocess.run([*command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (command, done.stderr)
    return done.stdout


def pywrangler_commands() -> set[str]:
    """pywrangler's own commands; it hands every other one to wrangler."""
    listed = help_of((str(PYWRANGLER),)).split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    return {line.split()[0] for line in listed.splitlines() if line.strip()}


def kebab(flag: str) -> str:
    """A flag as yargs reads it: `--propertyName` and `--property-name` are one flag."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", flag).lower()


def flags_missing(arguments: list[str], help_text: str) -> list[str]:
    offered = {kebab(flag) for flag in re.findall(r"(?<![\w-])--[A-Za-z][\w-]*", help_text)}
    flags = [argument.split("=", 1)[0] for argument in arguments if argument.startswith("--")]
    return [flag for flag in flags if kebab(flag) not in offered]


def wrangler_problems(arguments: list[str]) -> list[str]:
    """What is wrong with `wrangler ARGUMENTS`: a command it does not have, a flag the command lacks."""
    # The command and its positionals come first, then the flags (with their values).
    first_flag = next((i for i, argument in enumerate(arguments) if argument.startswith("-")), len(arguments))
    words = tuple(arguments[:first_flag])
    text = wrangler_help(words)
    usage = text.lstrip().splitlines()[0].split()
    assert usage[0] == "wrangler", text
    command = [word for word in usage[1:] if not word.startswith(("<", "["))]
    positionals = len(usage) - 1 - len(command)
    problems = []
    if list(words[: len(command)]) != command or len(words) - len(command) > positionals:
        problems.append(f"wrangler has no command {' '.join(words)!r} (closest: {' '.join(command)!r})")
    return problems + [f"`wrangler {' '.join(command)}` has no {flag}" for flag in flags_missing(arguments, text)]


def cloudflare_line_problems(line: str) -> list[str]:
    words = shlex.split(line, comments=True)
    if words[:1] == ["export"]:
        words = words[1:]
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        words = words[1:]  # a shell variable set for the lines after it
    if not words:
        return []
    if words[0] == ".venv/bin/memvault":
        command = tuple(word for word in words[1:] if not word.startswith("-"))[:2]
        text = help_of((str(ROOT / words[0]), *command))
        return [f"`memvault {' '.join(command)}` has no {flag}" for flag in flags_missing(words[1:], text)]
    if words == ["npm", "ci"]:
        return [] if (ROOT / "package-lock.json").is_file() else ["no package-lock.json"]
    if words[:3] == ["uv", "run", "pywrangler"]:
        rest = words[3:]
        if rest and rest[0] in pywrangler_commands():
            text = help_of((str(PYWRANGLER), rest[0]))
            return [f"`pywrangler {rest[0]}` has no {flag}" for flag in flags_missing(rest[1:], text)]
        return wrangler_problems(rest)
    if words[:2] == ["npx", "wrangler"]:
        return wrangler_problems(words[2:])
    if words[0] in ("python3", ".venv/bin/python") and words[1].startswith("scripts/"):
        script = ROOT / words[1]
        if not script.is_file():
            return [f"no {words[1]}"]
        text = help_of((sys.executable, str(script)))
        return [f"{words[1]} has no {flag}" for flag in flags_missing(words[2:], text)]
    return [f"no static check knows {words[0]!r}"]


def test_cloudflare_blocks_name_commands_and_flags_that_exist() -> None:
    lines = [(block.where, line) for block in every_block() if block.cloudflare for line in block.text.splitlines()]
    assert lines, "no block is marked as needing Cloudflare"
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = list(pool.map(lambda item: (item, cloudflare_line_problems(item[1])), lines))
    assert [(where, line, problems) for (where, line), problems in found if problems] == []


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", prose(page), flags=re.M)}


def test_every_link_leads_somewhere() -> None:
    broken = []
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(page)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


def sentences(page: Path) -> list[str]:
    text = re.sub(r"\s+", " ", prose(page))
    return [s.strip().lower() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`*(])", text)]


def test_no_sentence_is_said_twice() -> None:
    counted = Counter(s for page in pages() for s in set(sentences(page)) if len(s.split()) >= 8 and "|" not in s)
    assert [s for s, n in counted.items() if n > 1] == []


def test_the_architecture_layout_names_every_package() -> None:
    (block,) = [b for b in blocks(DOCS / "architecture.md") if b.section == "Layout"]
    src = ROOT / "src" / "memvault"
    packages = sorted(p.parent.relative_to(src).as_posix() for p in src.rglob("__init__.py") if p.parent != src)
    missing = [p for p in packages if f"{p.rsplit('/', 1)[-1]}/" not in block.text]
    assert packages and missing == []

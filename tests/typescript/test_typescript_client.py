"""The TypeScript client (`clients/typescript/`): strict type-checking, its build, and its Vitest
suite, which runs in workerd (Cloudflare's Vitest integration) against a real local memvault that
this test starts on 127.0.0.1 with a fresh memory key."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from local_http import memvault_serve  # noqa: E402
from node_tools import NODE_BIN, node, node_env  # noqa: E402

PACKAGE = ROOT / "clients" / "typescript"
MEMVAULT = Path(sys.executable).with_name("memvault")


def tool(name: str) -> str:
    path = NODE_BIN / name
    if not path.exists() or node() is None:
        pytest.skip(f"{path.relative_to(ROOT)} is missing: run `npm ci` (scripts/test does)")
    return str(path)


@pytest.fixture(scope="module")
def memvault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A local memvault server and a memory key for it: (its address, the key's secret)."""
    data = tmp_path_factory.mktemp("memvault")
    env = {**os.environ, "MEMVAULT_DATA_DIR": str(data), "MEMVAULT_EMBEDDER": "hash"}
    created = subprocess.run([str(MEMVAULT), "keys", "create", "--label", "typescript client"], env=env,
                             capture_output=True, text=True, check=True)
    key = created.stdout.strip()
    with memvault_serve(env) as url:
        yield url, key


def run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=PACKAGE, env=node_env(CI="1", NO_COLOR="1", **env), capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_the_package_type_checks_strictly_and_builds(tmp_path: Path) -> None:
    tsc = tool("tsc")
    checked = run([tsc, "-p", "tsconfig.json"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    built = run([tsc, "-p", "tsconfig.build.json", "--outDir", str(tmp_path)])
    assert built.returncode == 0, built.stdout + built.stderr
    assert {"index.js", "index.d.ts", "lazy.js", "client.js"} <= {p.name for p in tmp_path.iterdir()}
    # The public surface says what it takes and answers: no `any` in the declarations.
    declared = "\n".join(p.read_text() for p in tmp_path.glob("*.d.ts"))
    assert ": any" not in declared and "<any>" not in declared and "any[]" not in declared


def test_the_vitest_suite_passes_in_workerd(memvault: tuple[str, str]) -> None:
    url, key = memvault
    done = run([tool("vitest"), "run", "--reporter=verbose"], MEMVAULT_URL=url, MEMVAULT_KEY=key)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-8000:]
    [summary] = re.findall(r"^\s*Tests\s+(.*)$", output, re.MULTILINE)
    assert re.fullmatch(r"\d+ passed \(\d+\)", summary.strip()), summary


def test_the_readmes_bot_type_checks_against_the_package(tmp_path: Path) -> None:
    """The README's five lines, as a bot would write them (``answer`` is the bot's own model call)."""
    readme = (PACKAGE / "README.md").read_text()
    block = re.search(r"```ts\n(.*?)```", readme, re.DOTALL)
    assert block, "the README shows the bot's code in a ```ts block"
    prelude = ("declare function answer(history: readonly { role: string; content: string }[], text: string, "
               "degraded: boolean): Promise<string>;\n")
    (tmp_path / "bot.ts").write_text(prelude + block.group(1))
    config = json.loads((PACKAGE / "tsconfig.json").read_text())
    config["compilerOptions"].update({
        "typeRoots": [str(ROOT / "node_modules" / "@cloudflare")], "types": ["workers-types"],
        "paths": {"@memvault/client": [str(PACKAGE / "src" / "index.ts")]}})
    config["include"] = [str(tmp_path / "bot.ts")]
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    checked = run([tool("tsc"), "-p", str(tmp_path / "tsconfig.json")])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_example_bot_type_checks_against_the_package() -> None:
    checked = run([tool("tsc"), "-p", str(ROOT / "examples" / "typescript_bot" / "tsconfig.json")])
    assert checked.returncode == 0, checked.stdout + checked.stderr

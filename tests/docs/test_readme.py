"""The README as a newcomer follows it: its size, its two commands (`.ci/run` runs the second), its
first memory with curl and its OpenAI snippet run word for word against `scripts/dev` (started by
the test, on a free port, with a fake OpenAI upstream on 127.0.0.1), and its layout names real
paths. Its MCP config is run by tests/api/mcp/test_readme_config.py."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from doc_pages import README, ROOT, blocks_under

sys.path.insert(0, str(ROOT / "tests" / "api" / "providers"))
from fake_upstream import FakeUpstream, Received, ServerThread

# Where the README serves memvault; the test serves it on a free port and says so in each block.
README_ADDRESS = "127.0.0.1:8787"
DEADLINE_SECONDS = 120.0


@dataclass
class Served:
    address: str
    data_dir: Path
    upstream: FakeUpstream
    env: dict[str, str]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def reader_environment(**more: str) -> dict[str, str]:
    """A reader's shell: no memvault variable set but what the test names."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}, **more}


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {DEADLINE_SECONDS:.0f} s for {what}")
        time.sleep(0.1)


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`scripts/dev --port P` as the README starts it (the default embedder, its data folder named by
    MEMVAULT_DATA_DIR so the clone's own stays untouched), forwarding OpenAI calls to a fake."""
    upstream = FakeUpstream()
    data_dir = tmp_path_factory.mktemp("readme") / ".memvault"
    with ServerThread(upstream) as fake:
        env = reader_environment(MEMVAULT_DATA_DIR=str(data_dir), MEMVAULT_OPENAI_BASE_URL=fake.url)
        port = free_port()
        log = data_dir.parent / "dev.log"
        with log.open("w") as out:
            process = subprocess.Popen([str(ROOT / "scripts" / "dev"), "--port", str(port)], cwd=ROOT, env=env,
                                       stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for(lambda: healthy(url) or process.poll() is not None, "scripts/dev to serve")
            assert process.poll() is None, log.read_text()
            yield Served(url.removeprefix("http://"), data_dir, upstream, env)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


def json_values(text: str) -> list[Any]:
    """The JSON values printed one after another (curl -s adds no newline)."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def test_the_readme_fits_on_a_screen() -> None:
    assert len(README.read_bytes()) <= 10 * 1024


def test_the_two_commands_are_what_a_newcomer_and_ci_run() -> None:
    (block,) = blocks_under(README, "Two commands")
    assert [line.split("#")[0].strip() for line in block.text.splitlines()] == ["scripts/dev", "scripts/test"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))]
    assert ci == ["exec scripts/test"]


def test_a_first_memory_runs_as_written(served: Served) -> None:
    (block,) = blocks_under(README, "A first memory")
    script = block.text.replace(README_ADDRESS, served.address)
    assert script != block.text
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=served.env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"data folder: {served.data_dir}" in done.stderr  # the key is the server's
    stored, found = json_values(done.stdout)
    assert stored["messages_accepted"] == 1 and len(stored["message_ids"]) == 1
    assert found["items"][0]["text"] == "My cat is called Biscuit."
    assert found["items"][0]["source_ids"] == stored["message_ids"]


def test_the_openai_snippet_recalls_turn_one_in_turn_three(served: Served, tmp_path: Path) -> None:
    (block,) = [b for b in blocks_under(README, "Memory for an OpenAI app") if b.kind == "python"]
    created = subprocess.run([str(ROOT / ".venv" / "bin" / "memvault"), "keys", "create", "--label", "chat"],
                             cwd=ROOT, env=served.env, capture_output=True, text=True, timeout=120, check=True)
    key = created.stdout.strip()
    said: list[str] = []

    async def answer_once_memvault_holds_the_turns_before(request: Received) -> None:
        # memvault stores a turn after its answer reached the client; a model answers in seconds, this
        # fake at once: it answers each call once the turns before it are stored, the event the third
        # call's recall depends on.
        if request.path != "/v1/chat/completions":
            return
        earlier = list(said)
        said.append(request.json["messages"][-1]["content"])
        deadline = time.monotonic() + DEADLINE_SECONDS
        async with httpx.AsyncClient(base_url=f"http://{served.address}", timeout=30) as http:
            while True:
                page = (await http.get("/v1/memory", headers={"Authorization": f"Bearer {key}"})).json()
                held = {item["content"] for item in page["items"]}
                if all(text in held for text in earlier):
                    return
                assert time.monotonic() < deadline, f"turns {earlier} never stored"
                await asyncio.sleep(0.05)

    served.upstream.before_answer = answer_once_memvault_holds_the_turns_before
    try:
        (tmp_path / "chat.py").write_text(block.text.replace(README_ADDRESS, served.address))
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "chat.py"], cwd=tmp_path,
                              env={**served.env, "MEMVAULT_KEY": key, "OPENAI_API_KEY": "sk-readme"},
                              capture_output=True, text=True, timeout=300)
    finally:
        served.upstream.before_answer = None
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == served.upstream.answer
    calls = [r.json["messages"] for r in served.upstream.received
             if r.path == "/v1/chat/completions" and r.headers.get("authorization") == "Bearer sk-readme"]
    assert len(calls) == 3
    first, _, third = calls
    assert first == [{"role": "user", "content": "My sister Ines lives in Porto."}]
    assert third[-1] == {"role": "user", "content": "Which city should I fly to, to visit my sister?"}
    assert third[0]["role"] == "system" and "My sister Ines lives in Porto." in third[0]["content"]


def test_the_layout_fits_in_ten_lines_and_names_real_paths() -> None:
    (block,) = blocks_under(README, "Layout")
    lines = block.text.splitlines()
    assert block.kind == "text" and len(lines) <= 10
    for line in lines:
        first, *others = line.split("   ")[0].strip().split(", ")
        assert (ROOT / first).exists(), line
        for other in others:  # named beside the first, in the same folder
            assert (ROOT / first.rstrip("/")).parent.joinpath(other).exists(), line

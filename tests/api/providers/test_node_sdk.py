"""The official OpenAI, Anthropic and Gemini Node SDKs against `memvault serve` in front of a fake
provider, used as their READMEs show: the memory key as the API key (Gemini: in a header of the
client's `httpOptions`, its API key the provider's), a whole answer, a stream read to its end (with
usage; through the Anthropic stream helper), a stream left after its first chunk, and refusals that
reach the SDK as its typed errors. The turn is stored once and recalled by the next call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream, ServerThread

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from local_http import memvault_serve
from node_tools import ROOT, node, node_env

MEMVAULT = Path(sys.executable).with_name("memvault")


def needs_sdk(package: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(node() is None or not (ROOT / "node_modules" / package).is_dir(),
                              reason="needs Node and `npm ci` (scripts/test runs it)")


def memvault_cli(env: dict[str, str], *args: str) -> str:
    return subprocess.run([str(MEMVAULT), *args], env=env, capture_output=True, text=True, check=True).stdout.strip()


def run_app(tmp_path: Path, app_name: str, upstream: FakeUpstream, base_path: str, *extra_args: str,
            limited: bool = False, awaited: tuple[str, ...] = ("What is my dog called?",),
            ) -> tuple[dict[str, Any], list[str]]:
    """Run the Node app ``app_name`` against `memvault serve` in front of ``upstream``, given
    memvault's URL, a memory key (the app's API key, or its header's value), with ``limited`` a
    second memory key admitted one call a minute, and ``extra_args``; what the app saw, and the
    texts the first memory key holds once each of ``awaited`` is stored."""
    with ServerThread(upstream) as fake:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path / "data"), "MEMVAULT_EMBEDDER": "hash",
               "MEMVAULT_OPENAI_BASE_URL": fake.url, "MEMVAULT_ANTHROPIC_BASE_URL": fake.url,
               "MEMVAULT_GEMINI_BASE_URL": fake.url}
        key = memvault_cli(env, "keys", "create")
        args = [key, *extra_args]
        if limited:
            second = json.loads(memvault_cli(env, "keys", "create", "--json"))
            memvault_cli(env, "limits", second["id"], "--requests-per-minute", "1")
            args.insert(1, second["key"])
        with memvault_serve(env) as url:
            # An app folder of its own, whose node_modules are the repository's (where `npm ci` put the SDK).
            app = tmp_path / "app"
            app.mkdir()
            (app / "node_modules").symlink_to(ROOT / "node_modules")
            (app / "app.mjs").write_text(Path(__file__).with_name(app_name).read_text())
            ran = subprocess.run([str(node()), str(app / "app.mjs"), f"{url}{base_path}", *args], env=node_env(),
                                 capture_output=True, text=True, timeout=120)
            assert ran.returncode == 0, ran.stderr[-2000:]
            auth = {"Authorization": f"Bearer {key}"}
            deadline = time.monotonic() + 60
            while True:
                page = httpx.get(f"{url}/v1/memory", headers=auth, params={"limit": 50}).json()["items"]
                texts = [item["content"] for item in page]
                if set(awaited) <= set(texts):
                    return json.loads(ran.stdout), texts
                assert time.monotonic() < deadline, texts
                time.sleep(0.1)


@needs_sdk("openai")
def test_the_openai_node_sdk_as_its_readme_shows(tmp_path: Path) -> None:
    # Chunks a little apart, as a model writes them: a stream left after its first one is left
    # while the answer is still coming.
    upstream = FakeUpstream(answer="Your dog is called Rex.", chunk_delay=0.05)
    seen, texts = run_app(tmp_path, "openai_node_app.mjs", upstream, "/v1")
    assert seen["whole"] == seen["streamed"] == upstream.answer
    assert seen["usage"]["completion_tokens"] > 0 and seen["left"] == "chatcmpl-fake"
    assert seen["refused"] == {"typed": True, "status": 400}
    assert seen["unauthorized"] == {"typed": True, "status": 401}
    # The first call's turn was recalled into the second: it reached the provider's system message.
    second = next(r for r in upstream.received if b"What is my dog called?" in r.body)
    assert "My dog is called Rex." in second.json["messages"][0]["content"]
    # Stored once, whatever the stream left early and the refusals did.
    assert texts.count("My dog is called Rex.") == 1
    assert "This stream is left after one chunk." not in texts


@needs_sdk("@anthropic-ai/sdk")
def test_the_anthropic_node_sdk_as_its_readme_shows(tmp_path: Path) -> None:
    upstream = FakeUpstream(answer="Your dog is called Rex.", chunk_delay=0.05)
    seen, texts = run_app(tmp_path, "anthropic_node_app.mjs", upstream, "")
    assert seen["whole"] == seen["streamed"] == seen["final"]["text"] == upstream.answer
    assert seen["final"]["stop"] == "end_turn" and seen["final"]["output_tokens"] > 0
    assert seen["left"] == "message_start" and seen["counted"] == 42
    assert seen["refused"] == {"typed": True, "status": 400, "type": "invalid_request_error"}
    assert seen["unauthorized"] == {"typed": True, "status": 401}
    second = next(r for r in upstream.received if b"What is my dog called?" in r.body)
    assert "My dog is called Rex." in second.json["system"]
    # The memory key the SDK sent as its API key never reached the provider.
    assert not any(b"mk_" in value.encode() for r in upstream.received for value in r.headers.values())
    assert texts.count("My dog is called Rex.") == 1
    assert "This stream is left after one event." not in texts
    assert "Count me." not in texts


PROVIDER_KEY = "AIzaSy" + "F" * 33  # the shape of a Gemini API key, known to no provider


@needs_sdk("@google/genai")
def test_the_gemini_node_sdk_as_its_readme_shows(tmp_path: Path) -> None:
    upstream = FakeUpstream(answer="Your dog is called Rex.", chunk_delay=0.05)
    # The loop left early is stored: its connection stayed open and the answer reached it whole.
    seen, texts = run_app(tmp_path, "genai_node_app.mjs", upstream, "", PROVIDER_KEY, limited=True,
                          awaited=("What is my dog called?", "And what is my cat called?", "This stream's loop is left."))
    assert seen["whole"] == seen["streamed"] == upstream.answer and seen["finish"] == "STOP"
    assert seen["left"] == seen["aborted"] == "Your " and seen["abortError"] == "AbortError"
    assert seen["counted"] == 31 and seen["embedded"] == [0.5, 0.25, -0.125]
    assert seen["chat"] == [upstream.answer, upstream.answer, 4]
    assert seen["uploaded"] == {"name": "files/fake", "sizeBytes": "18"} and seen["listed"] == ["files/fake"]
    for refusal, status, state in (("unauthorized", 401, "UNAUTHENTICATED"), ("limited", 429, "RESOURCE_EXHAUSTED")):
        assert seen[refusal]["typed"] and seen[refusal]["status"] == status
        assert json.loads(seen[refusal]["message"])["error"] == {**json.loads(seen[refusal]["message"])["error"],
                                                                  "code": status, "status": state}
    # The first call's turn was recalled into the stream's systemInstruction.
    second = next(r for r in upstream.received if b"What is my dog called?" in r.body)
    assert second.path == "/v1/models/gemini-test:streamGenerateContent" and second.query == "alt=sse"
    assert "My dog is called Rex." in second.json["systemInstruction"]["parts"][-1]["text"]
    # Every request, uploads included, reached the provider with its key and without the memory key.
    assert {r.headers.get("x-goog-api-key") for r in upstream.received} == {PROVIDER_KEY}
    assert not any("mk_" in f"{r.query} {r.headers}" for r in upstream.received)
    # The refused calls were not forwarded: the limited key's first call was, its second not.
    assert sum(b"One call too many." in r.body for r in upstream.received) == 0
    assert texts.count("My dog is called Rex.") == texts.count("My cat is called Tom.") == 1
    assert "This stream is aborted after one chunk." not in texts
    assert "Count me." not in texts and "Embed me." not in texts
    # The Interactions API is passed through as it is: no memory goes in, nothing is stored.
    assert seen["interaction"] == "Hello Amir."
    (interaction,) = [r for r in upstream.received if r.path == "/v1/interactions"]
    assert interaction.json == {"model": "gemini-test", "input": "Hi, my name is Amir."}
    assert "Hi, my name is Amir." not in texts

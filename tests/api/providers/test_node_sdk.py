"""The official OpenAI and Anthropic Node SDKs against `memvault serve` in front of a fake
provider, used as their READMEs show: the memory key as the API key, a whole answer, a stream read
to its end (with usage; through the Anthropic stream helper), a stream left after its first chunk,
and refusals that reach the SDK as its typed errors. The turn is stored once and recalled by the
next call."""

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


def run_app(tmp_path: Path, app_name: str, upstream: FakeUpstream, base_path: str) -> tuple[dict[str, Any], list[str]]:
    """Run the Node app ``app_name`` against `memvault serve` (its memory key as the app's API key)
    in front of ``upstream``; what the app saw, and the texts its memory key holds once the app's
    second question is stored."""
    with ServerThread(upstream) as fake:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path / "data"), "MEMVAULT_EMBEDDER": "hash",
               "MEMVAULT_OPENAI_BASE_URL": fake.url, "MEMVAULT_ANTHROPIC_BASE_URL": fake.url}
        key = subprocess.run([str(MEMVAULT), "keys", "create"], env=env, capture_output=True, text=True,
                             check=True).stdout.strip()
        with memvault_serve(env) as url:
            # An app folder of its own, whose node_modules are the repository's (where `npm ci` put the SDK).
            app = tmp_path / "app"
            app.mkdir()
            (app / "node_modules").symlink_to(ROOT / "node_modules")
            (app / "app.mjs").write_text(Path(__file__).with_name(app_name).read_text())
            ran = subprocess.run([str(node()), str(app / "app.mjs"), f"{url}{base_path}", key], env=node_env(),
                                 capture_output=True, text=True, timeout=120)
            assert ran.returncode == 0, ran.stderr[-2000:]
            auth = {"Authorization": f"Bearer {key}"}
            deadline = time.monotonic() + 60
            while True:
                page = httpx.get(f"{url}/v1/memory", headers=auth, params={"limit": 50}).json()["items"]
                texts = [item["content"] for item in page]
                if "What is my dog called?" in texts:
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

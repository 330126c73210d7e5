"""docs/providers.md's code blocks, run as written against the real server and the fake upstream:
the snippet that points each official SDK at memvault, the curl call, and Gemini's JavaScript SDK
and curl call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Router

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "docs"))
from doc_pages import DOCS, blocks_under  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from node_tools import node, node_env  # noqa: E402

PAGE = DOCS / "providers.md"
# Where the page serves memvault; the tests serve it elsewhere.
PAGE_ADDRESS = "127.0.0.1:8787"
SECTION = "Pointing each SDK at memvault"


def test_the_sdk_snippet_gives_each_sdk_memory(router: Router, key: tuple[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, secret = key
    (block,) = [b for b in blocks_under(PAGE, SECTION) if b.kind == "python"]
    # Each client keeps its own provider key, from its usual variable.
    for name, value in {"MEMVAULT_KEY": secret, "OPENAI_API_KEY": "sk-doc", "ANTHROPIC_API_KEY": "sk-ant-doc",
                        "GOOGLE_API_KEY": "g-doc"}.items():
        monkeypatch.setenv(name, value)
    names: dict[str, object] = {}
    exec(compile(block.text.replace(PAGE_ADDRESS, router.url.removeprefix("http://")), str(PAGE), "exec"), names)

    names["openai_client"].chat.completions.create(  # type: ignore[attr-defined]
        model="gpt-test", messages=[{"role": "user", "content": "The spare oars are in the shed."}])
    names["anthropic_client"].messages.create(  # type: ignore[attr-defined]
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "The kayak is green."}])
    names["gemini_client"].models.generate_content(  # type: ignore[attr-defined]
        model="gemini-test", contents="The paddles hang by the door.")

    router.wait_stored(key_id, "The spare oars are in the shed.", "The kayak is green.", "The paddles hang by the door.")
    sent = {r.path: r.headers for r in router.upstream.received[-3:]}
    assert sent["/v1/chat/completions"]["authorization"] == "Bearer sk-doc"
    assert sent["/v1/messages"]["authorization"] == "Bearer sk-ant-doc"  # anthropic 2.x sends its key so
    assert all("x-memory-key" not in headers for headers in sent.values())


def test_the_curl_call_goes_through_memvault(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    (block,) = [b for b in blocks_under(PAGE, SECTION) if b.kind == "sh"]
    script = block.text.replace(PAGE_ADDRESS, router.url.removeprefix("http://"))
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-doc", "MEMVAULT_KEY": secret})
    assert done.returncode == 0, done.stderr
    head, _, body = done.stdout.partition("\n\n")  # text mode reads each CRLF as one newline
    assert head.startswith("HTTP/1.1 200") and "x-memory-status: ok" in head.lower()
    assert router.upstream.answer in body
    router.wait_stored(key_id, "My cat is called Biscuit.", router.upstream.answer)


GEMINI_SECTION = "Gemini from JavaScript and from curl"


@pytest.mark.skipif(node() is None or not (ROOT / "node_modules" / "@google" / "genai").is_dir(),
                    reason="needs Node and `npm ci` (scripts/test runs it)")
def test_the_gemini_javascript_snippet_gives_the_sdk_memory(router: Router, key: tuple[str, str],
                                                            tmp_path: Path) -> None:
    key_id, secret = key
    (block,) = [b for b in blocks_under(PAGE, GEMINI_SECTION) if b.kind == "js"]
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "app.mjs").write_text(block.text.replace(PAGE_ADDRESS, router.url.removeprefix("http://")))
    ran = subprocess.run([str(node()), str(tmp_path / "app.mjs")], capture_output=True, text=True, timeout=120,
                         env=node_env(GEMINI_API_KEY="AIza-doc", MEMVAULT_KEY=secret))
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == router.upstream.answer
    sent = router.upstream.received[-1]
    assert sent.path == "/v1/models/gemini-2.5-flash:generateContent"
    assert sent.headers["x-goog-api-key"] == "AIza-doc" and "x-memory-key" not in sent.headers
    router.wait_stored(key_id, "My cat is called Biscuit.", router.upstream.answer)


def test_the_gemini_curl_call_goes_through_memvault_with_the_key_in_its_header_or_query(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    (block,) = [b for b in blocks_under(PAGE, GEMINI_SECTION) if b.kind == "sh"]
    script = block.text.replace(PAGE_ADDRESS, router.url.removeprefix("http://"))
    # The same call as older examples make it, the Gemini key in the query.
    in_query = script.replace('-H "x-goog-api-key: $GEMINI_API_KEY" ', "").replace(
        ":generateContent ", ":generateContent?key=$GEMINI_API_KEY ")
    assert in_query != script and "x-goog-api-key" not in in_query
    for run, expected in ((script, ("AIza-doc", "")), (in_query, (None, "key=AIza-doc"))):
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", run], capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "GEMINI_API_KEY": "AIza-doc", "MEMVAULT_KEY": secret})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["candidates"][0]["content"]["parts"][0]["text"] == router.upstream.answer
        sent = router.upstream.received[-1]
        assert (sent.headers.get("x-goog-api-key"), sent.query) == expected
        assert sent.path == "/v1beta/models/gemini-2.5-flash:generateContent" and "x-memory-key" not in sent.headers
    router.wait_stored(key_id, "My cat is called Biscuit.", router.upstream.answer)

"""SIGKILL of the real server the moment a client has its answer loses nothing of that call: the
turn, the usage and the receipt's usage are written before the answer's end goes out, and the
server settles them when it starts again, before it serves. Each round makes one routed call the
way a client does (a whole body; a stream read to `[DONE]` and dropped there, as the OpenAI SDK
does) and kills the server as soon as the call returns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
from fake_upstream import FakeUpstream, ServerThread

from local_http import free_port, memvault_serve, wait_healthy

ADMIN = "j" * 24 + "-admin-token-for-crashes"
INPUT_TOKENS = 11  # what the fake provider reports for every prompt


def openai_whole(url: str, secret: str, text: str) -> str:
    answer = httpx.post(f"{url}/v1/chat/completions", headers={"Authorization": f"Bearer {secret}"}, timeout=30,
                        json={"model": "gpt-test", "messages": [{"role": "user", "content": text}]})
    assert answer.status_code == 200, answer.text
    return answer.headers["x-memory-receipt"]


def openai_stream(url: str, secret: str, text: str) -> str:
    body = {"model": "gpt-test", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": text}]}
    with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {secret}"}) as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            if line == "data: [DONE]":
                return answer.headers["x-memory-receipt"]  # and hang up, as the SDK does
    raise AssertionError("the stream ended without [DONE]")


def anthropic_whole(url: str, secret: str, text: str) -> str:
    answer = httpx.post(f"{url}/v1/messages", timeout=30,
                        headers={"x-api-key": secret, "anthropic-version": "2023-06-01"},
                        json={"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": text}]})
    assert answer.status_code == 200, answer.text
    return answer.headers["x-memory-receipt"]


CALLS: list[tuple[Callable[[str, str, str], str], str]] = [
    (openai_whole, "The spare key for the shed is under the blue flowerpot."),
    (openai_stream, "My sister's flight lands at Gatwick on the ninth at noon."),
    (anthropic_whole, "I switched the allotment plot to runner beans this spring."),
]


def served(env: dict[str, str], logs: object) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("memvault")), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=logs, stderr=logs)  # type: ignore[arg-type]
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url, process, 120, logs)  # type: ignore[arg-type]
    return process, url


def killed_after_each(env: dict[str, str], logs: object, rounds: int) -> Iterator[tuple[int, str, str]]:
    """A fresh `memvault serve` for each round, SIGKILLed as soon as the round's call returns:
    (round, its url, the memory key made in the first round)."""
    secret = ""
    for number in range(rounds):
        process, url = served(env, logs)
        try:
            if not secret:
                created = httpx.post(f"{url}/v1/admin/keys", json={"label": "crash"},
                                     headers={"Authorization": f"Bearer {ADMIN}"})
                secret = created.json()["key"]
            yield number, url, secret
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)


def test_kill_9_as_the_client_gets_its_answer_loses_no_turn_usage_or_receipt(tmp_path: Path) -> None:
    upstream = FakeUpstream()
    with ServerThread(upstream) as fake, tempfile.TemporaryFile() as logs:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash",
               "MEMVAULT_ADMIN_TOKEN": ADMIN, "MEMVAULT_OPENAI_BASE_URL": fake.url,
               "MEMVAULT_ANTHROPIC_BASE_URL": fake.url, "MEMVAULT_LOG_LEVEL": "warning"}
        receipts: list[str] = []
        secret = ""
        for number, url, secret in killed_after_each(env, logs, len(CALLS)):
            call, text = CALLS[number]
            upstream.answer = f"Noted, thank you ({number})."
            receipts.append(call(url, secret, text))

        with memvault_serve(env) as url:
            headers = {"X-Memory-Key": secret}
            stored = httpx.get(f"{url}/v1/memory", params={"limit": 50}, headers=headers).json()
            contents = [m["content"] for m in stored["items"]]
            for number, (_, text) in enumerate(CALLS):
                assert contents.count(text) == contents.count(f"Noted, thank you ({number}).") == 1, contents
            usage = httpx.get(f"{url}/v1/usage", headers=headers).json()["total"]
            assert (usage["calls"], usage["input_tokens"], usage["messages_stored"]) == (
                len(CALLS), INPUT_TOKENS * len(CALLS), 2 * len(CALLS)), json.dumps(usage)
            for receipt_id in receipts:
                receipt = httpx.get(f"{url}/v1/memory/receipts/{receipt_id}", headers=headers).json()
                assert receipt["receipt"]["usage"]["input_tokens"] == INPUT_TOKENS, receipt


def test_kill_9_as_a_store_is_answered_loses_none_of_its_usage(tmp_path: Path) -> None:
    with tempfile.TemporaryFile() as logs:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash",
               "MEMVAULT_ADMIN_TOKEN": ADMIN, "MEMVAULT_LOG_LEVEL": "warning"}
        secret = ""
        for number, url, secret in killed_after_each(env, logs, len(CALLS)):
            text = CALLS[number][1]
            turn = [{"role": "user", "content": text}, {"role": "assistant", "content": f"Noted ({number})."}]
            stored = httpx.post(f"{url}/v1/memory", json={"messages": turn}, headers={"X-Memory-Key": secret})
            assert stored.status_code == 200, stored.text

        with memvault_serve(env) as url:
            usage = httpx.get(f"{url}/v1/usage", headers={"X-Memory-Key": secret}).json()["total"]
            assert (usage["messages_stored"], usage["embeddings"]) == (2 * len(CALLS), 2 * len(CALLS)), usage
            assert usage["tokens_stored"] > 0 and usage["embedding_tokens"] > 0, usage

"""The secret gate on the memory router: a sample of the secret corpus (every family, both splits)
said in turns through the provider endpoints is gone from the vault, from what later turns inject
into the provider's system field, and from every log line; a session id carrying a secret is
refused in the provider's error envelope before the upstream is called or a vault is named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from conftest import Router, wait_until
from log_capture import Logs
from memvault.core import memory

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from secret_corpus import SECRETS, Case, gated, leaks, sample

SECRET_SAMPLE = sample(gated(SECRETS))
TURN_SIZE = 10


def _chat(router: Router, secret: str, content: str, **headers: str | bytes) -> httpx.Response:
    body = {"model": "test-model", "messages": [{"role": "user", "content": content}]}
    served = router.served(secret)
    response = httpx.post(f"{router.url}/v1/chat/completions", json=body, timeout=30, trust_env=False,
                          headers={"X-Memory-Key": secret, **headers})
    router.wait_served(secret, served + 1)
    return response


def test_no_secret_said_through_the_router_is_stored_injected_or_logged(
    router: Router, key: tuple[str, str], logs: Logs
) -> None:
    key_id, secret = key
    for start in range(0, len(SECRET_SAMPLE), TURN_SIZE):
        marker = f"turn {start}:"
        texts = [case.text for case in SECRET_SAMPLE[start: start + TURN_SIZE]]
        assert _chat(router, secret, "\n\n".join([marker, *texts])).status_code == 200
        wait_until(lambda marker=marker: any(marker in t for t in router.stored_texts(key_id)), f"{marker} stored")
    stored = "\n".join(router.stored_texts(key_id))
    assert leaks(SECRET_SAMPLE, stored) == []
    assert stored.count("[redacted:") >= len(SECRET_SAMPLE)
    asked = _chat(router, secret, "What did I say about my password, token, card and keys?")
    assert int(asked.headers["x-memory-items"]) >= 1
    injected = json.dumps(router.upstream.received[-1].json, ensure_ascii=False)
    assert "[redacted:" in injected
    assert leaks(SECRET_SAMPLE, injected) == []
    assert leaks(SECRET_SAMPLE, "\n".join(logs.lines)) == []


SESSION_SECRETS = [case for case in SECRET_SAMPLE if case.text.isprintable() and len(case.text) <= 200][::4]


@pytest.mark.parametrize("case", SESSION_SECRETS, ids=[f"{n}-{c.family}" for n, c in enumerate(SESSION_SECRETS)])
def test_a_session_id_carrying_a_secret_is_refused_in_the_providers_envelope(
    router: Router, key: tuple[str, str], logs: Logs, case: Case
) -> None:
    key_id, secret = key
    calls = len(router.upstream.received)
    response = _chat(router, secret, "hello", **{"X-Session-ID": case.text.encode()})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    # A value holding ", " reads as the header given twice (Workers' join of two), refused first.
    reason = "given more than once" if ", " in case.text else "X-Session-ID looks like it contains a secret"
    assert error["type"] == "invalid_request_error" and reason in error["message"]
    assert leaks([case], response.text) == []
    assert len(router.upstream.received) == calls
    assert router.run(lambda: memory.vaults_of(router.deps, key_id)) in ([], [f"{key_id}:core"])
    assert leaks([case], "\n".join(logs.lines)) == []


def test_a_pin_the_user_gives_as_the_answer_to_the_assistants_question_is_not_stored(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    messages = [{"role": "user", "content": "Can you help me note how to disarm the shop alarm?"},
                {"role": "assistant", "content": "Of course. What is the alarm code?"},
                {"role": "user", "content": "8362"}]
    served = router.served(secret)
    response = httpx.post(f"{router.url}/v1/chat/completions", json={"model": "test-model", "messages": messages},
                          timeout=30, trust_env=False, headers={"X-Memory-Key": secret})
    assert response.status_code == 200
    router.wait_served(secret, served + 1)
    wait_until(lambda: "[redacted:password]" in router.stored_texts(key_id), "the user's answer stored")
    assert not any("8362" in text for text in router.stored_texts(key_id))


def test_an_identity_number_and_a_card_code_in_a_routed_call_are_not_stored(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    messages = [{"role": "user", "content": "Please fill the form: my social insurance number is 130 692 544 and the "
                                            "card's cryptogramme visuel : 318"}]
    served = router.served(secret)
    response = httpx.post(f"{router.url}/v1/chat/completions", json={"model": "test-model", "messages": messages},
                          timeout=30, trust_env=False, headers={"X-Memory-Key": secret})
    assert response.status_code == 200
    router.wait_served(secret, served + 1)
    wait_until(lambda: "[redacted:national_id]" in " ".join(router.stored_texts(key_id)), "the user's turn stored")
    stored = " ".join(router.stored_texts(key_id))
    assert "130 692 544" not in stored and "318" not in stored and "[redacted:card_code]" in stored

"""Usage accounting and per-key limits through a real local server in front of a fake provider:
each provider's own token counts reach `/v1/usage`, the admin sets limits over HTTP, a key over a
limit is refused in its provider's envelope (the official SDKs raise their rate-limit error) with
nothing forwarded or stored, concurrent calls at a limit never get past it, and other keys are
unaffected."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from fake_upstream import FakeUpstream, LoopCapture, ServerThread
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from conftest import wait_until
from memvault.api.app import create_app
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

ADMIN = "u" * 24 + "-admin-token-for-usage"
ADMIN_AUTH = {"Authorization": f"Bearer {ADMIN}"}
INPUT_TOKENS = 11  # what the fake provider reports for every prompt


@dataclass
class Site:
    url: str
    upstream: FakeUpstream
    capture: LoopCapture

    def new_key(self) -> tuple[str, str]:
        answer = httpx.post(f"{self.url}/v1/admin/keys", json={"label": "usage"}, headers=ADMIN_AUTH)
        assert answer.status_code == 200, answer.text
        return answer.json()["id"], answer.json()["key"]

    def usage(self, secret: str, **query: str) -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/v1/usage", params=query, headers={"X-Memory-Key": secret})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def wait_usage(self, secret: str, calls: int, **query: str) -> dict[str, Any]:
        """The key's usage once ``calls`` calls are accounted (accounting runs after the answer)."""
        return wait_until(lambda: (u := self.usage(secret, **query))["total"]["calls"] >= calls and u,
                          f"{calls} calls accounted")

    def set_limits(self, key_id: str, **limits: int | None) -> httpx.Response:
        return httpx.put(f"{self.url}/v1/admin/keys/{key_id}/limits", json=limits, headers=ADMIN_AUTH)

    def chat(self, secret: str, text: str = "hello there", **extra: Any) -> httpx.Response:
        body = {"model": "gpt-test", "messages": [{"role": "user", "content": text}], **extra}
        return httpx.post(f"{self.url}/v1/chat/completions", json=body,
                          headers={"X-Memory-Key": secret, "Authorization": "Bearer sk-test"}, timeout=30)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    upstream = FakeUpstream()
    data_dir: Path = tmp_path_factory.mktemp("usage-data")
    with ServerThread(upstream) as fake:
        settings = load_settings({
            "MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_ADMIN_TOKEN": ADMIN,
            "MEMVAULT_OPENAI_BASE_URL": fake.url, "MEMVAULT_ANTHROPIC_BASE_URL": fake.url,
            "MEMVAULT_GEMINI_BASE_URL": fake.url,
        })
        deps = build_local_deps(settings)
        capture = LoopCapture(create_app(deps))
        with ServerThread(capture) as server:
            yield Site(server.url, upstream, capture)
            if capture.loop is not None:
                asyncio.run_coroutine_threadsafe(close_local_deps(deps), capture.loop).result(timeout=30)


def test_a_fresh_key_has_used_nothing_today(site: Site) -> None:
    _, secret = site.new_key()
    usage = site.usage(secret)
    assert usage["group_by"] == "day" and usage["from_day"] == usage["to_day"]
    assert usage["rows"] == [] and usage["total"]["calls"] == 0


def test_each_provider_reports_its_own_tokens(site: Site) -> None:
    _, secret = site.new_key()
    words = len(site.upstream.answer.split(" "))
    headers = {"X-Memory-Key": secret}
    openai_client = openai.OpenAI(base_url=f"{site.url}/v1", api_key="sk-test", max_retries=0, default_headers=headers)
    openai_client.chat.completions.create(model="gpt-a", messages=[{"role": "user", "content": "one"}])
    stream = openai_client.chat.completions.create(model="gpt-a", messages=[{"role": "user", "content": "two"}],
                                                   stream=True, stream_options={"include_usage": True})
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == site.upstream.answer
    openai_client.responses.create(model="gpt-r", input="three")
    claude = anthropic.Anthropic(base_url=site.url, api_key="sk-ant", max_retries=0, default_headers=headers)
    with claude.messages.stream(model="claude-a", max_tokens=64, messages=[{"role": "user", "content": "four"}]) as s:
        assert s.get_final_text() == site.upstream.answer
    gemini = genai.Client(api_key="g-key", http_options=types.HttpOptions(base_url=site.url, headers=headers))
    gemini.models.generate_content(model="gemini-a", contents="five")
    usage = site.wait_usage(secret, 5, group_by="model")
    by_model = {row["model"]: row for row in usage["rows"]}
    assert set(by_model) == {"gpt-a", "gpt-r", "claude-a", "gemini-a"}
    assert by_model["gpt-a"]["calls"] == 2 and by_model["gpt-a"]["input_tokens"] == 2 * INPUT_TOKENS
    assert by_model["gpt-a"]["output_tokens"] == 2 * words
    for model in ("gpt-r", "claude-a", "gemini-a"):
        assert (by_model[model]["calls"], by_model[model]["input_tokens"], by_model[model]["output_tokens"]) == (
            1, INPUT_TOKENS, words), model
    assert usage["total"]["messages_stored"] == 10 and usage["total"]["tokens_stored"] > 0
    assert usage["total"]["searches"] == 5  # each call recalled memory once
    by_day = site.usage(secret)
    assert by_day["rows"][0]["day"] == by_day["to_day"] and by_day["total"] == usage["total"]


def test_memory_searches_and_stores_are_counted(site: Site) -> None:
    _, secret = site.new_key()
    headers = {"X-Memory-Key": secret}
    stored = httpx.post(f"{site.url}/v1/memory", json={"messages": [{"role": "user", "content": "I keep bees."}]},
                        headers=headers)
    assert stored.status_code == 200, stored.text
    found = httpx.post(f"{site.url}/v1/memory/search", json={"query": "bees"}, headers=headers)
    assert found.status_code == 200, found.text
    usage = wait_until(lambda: (u := site.usage(secret))["total"]["searches"] >= 1
                       and u["total"]["messages_stored"] >= 1 and u, "the search and the store accounted")
    assert usage["total"]["calls"] == 0 and usage["total"]["embeddings"] >= 1
    assert usage["rows"][0]["day"] == usage["to_day"]


def test_a_batch_sent_again_is_counted_once(site: Site) -> None:
    """A client retrying a store (after a timeout, a crash) sends the same ids again: the vault
    takes them once, and the key's usage counts them once."""
    _, secret = site.new_key()
    headers = {"X-Memory-Key": secret}
    batch = {"messages": [{"role": "user", "content": f"Bee hive number {n} is by the hedge.", "id": f"hive{n}"}
                          for n in range(5)]}
    for _ in range(3):
        assert httpx.post(f"{site.url}/v1/memory", json=batch, headers=headers).status_code == 200
    probe = {"messages": [{"role": "user", "content": "The last store of the test.", "id": "probe"}]}
    assert httpx.post(f"{site.url}/v1/memory", json=probe, headers=headers).status_code == 200
    usage = wait_until(lambda: (u := site.usage(secret))["total"]["messages_stored"] >= 6 and u, "the stores accounted")
    assert usage["total"]["messages_stored"] == 6


@pytest.mark.parametrize("query", [
    {"group_by": "week"}, {"group_by": "key"}, {"from": "2026-13-01"}, {"to": "yesterday"},
    {"from": "2026-05-02", "to": "2026-05-01"}, {"from": "2020-01-01", "to": "2026-01-01"}, {"from": "2026-5-1"},
])
def test_bad_usage_parameters_are_a_422_in_memvaults_envelope(site: Site, query: dict[str, str]) -> None:
    _, secret = site.new_key()
    answer = httpx.get(f"{site.url}/v1/usage", params=query, headers={"X-Memory-Key": secret})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_request"


def test_usage_needs_a_memory_key(site: Site) -> None:
    assert httpx.get(f"{site.url}/v1/usage").status_code == 401
    assert httpx.get(f"{site.url}/v1/usage", headers={"X-Memory-Key": "mk_nobody"}).status_code == 401


def test_admin_usage_groups_by_key_and_refuses_others(site: Site) -> None:
    key_id, secret = site.new_key()
    assert site.chat(secret).status_code == 200
    site.wait_usage(secret, 1)
    answer = httpx.get(f"{site.url}/v1/admin/usage", params={"group_by": "key"}, headers=ADMIN_AUTH)
    assert answer.status_code == 200, answer.text
    rows = {row["key_id"]: row for row in answer.json()["rows"]}
    assert rows[key_id]["calls"] == 1 and rows[key_id]["day"] is None
    assert httpx.get(f"{site.url}/v1/admin/usage", headers={"X-Memory-Key": secret}).status_code == 401


@pytest.mark.parametrize("limits", [
    {"requests_per_minute": 0}, {"requests_per_minute": -1}, {"provider_tokens_per_day": "many"},
    {"memory_tokens_per_day": 1.5}, {"requests_per_minute": True},
])
def test_bad_limits_are_refused_and_change_nothing(site: Site, limits: dict[str, Any]) -> None:
    key_id, _ = site.new_key()
    assert site.set_limits(key_id, requests_per_minute=5).status_code == 200
    answer = site.set_limits(key_id, **limits)
    assert answer.status_code == 422, answer.text
    now = httpx.get(f"{site.url}/v1/admin/keys/{key_id}/limits", headers=ADMIN_AUTH).json()
    assert now["requests_per_minute"] == 5


def test_limits_of_an_unknown_key_are_a_404(site: Site) -> None:
    assert site.set_limits("key_0000000000000000", requests_per_minute=1).status_code == 404
    assert httpx.put(f"{site.url}/v1/admin/keys/key_x/limits", json={"requests_per_minute": 1}).status_code == 401


def test_a_key_over_its_request_limit_gets_the_sdks_rate_limit_errors(site: Site) -> None:
    key_id, secret = site.new_key()
    limits = site.set_limits(key_id, requests_per_minute=1)
    assert limits.json() == {"id": key_id, "requests_per_minute": 1, "provider_tokens_per_day": None,
                             "memory_tokens_per_day": None}
    assert site.chat(secret, "first").status_code == 200
    forwarded = len(site.upstream.received)
    headers = {"X-Memory-Key": secret}
    gpt = openai.OpenAI(base_url=f"{site.url}/v1", api_key="sk", max_retries=0, default_headers=headers)
    claude = anthropic.Anthropic(base_url=site.url, api_key="sk", max_retries=0, default_headers=headers)
    gemini = genai.Client(api_key="g", http_options=types.HttpOptions(base_url=site.url, headers=headers))
    with pytest.raises(openai.RateLimitError) as refused:
        gpt.chat.completions.create(model="gpt", messages=[{"role": "user", "content": "x"}])
    assert 1 <= int(refused.value.response.headers["retry-after"]) <= 60
    assert "x-should-retry" not in refused.value.response.headers  # a wait within the minute is the SDK's to take
    with pytest.raises(openai.RateLimitError):
        gpt.responses.create(model="gpt", input="x")
    with pytest.raises(anthropic.RateLimitError):
        claude.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(genai_errors.ClientError) as gemini_refused:
        gemini.models.generate_content(model="gemini-a", contents="x")
    assert gemini_refused.value.code == 429 and gemini_refused.value.status == "RESOURCE_EXHAUSTED"
    own = httpx.post(f"{site.url}/v1/memory/search", json={"query": "x"}, headers=headers)
    assert own.status_code == 429 and own.json()["error"]["code"] == "rate_limited" and own.headers["retry-after"]
    assert len(site.upstream.received) == forwarded  # nothing refused was forwarded
    _, other = site.new_key()
    assert site.chat(other).status_code == 200
    assert site.set_limits(key_id).status_code == 200  # no limits again
    assert site.chat(secret, "after").status_code == 200


def test_a_key_over_its_tokens_for_the_day_is_refused_until_tomorrow(site: Site) -> None:
    key_id, secret = site.new_key()
    assert site.set_limits(key_id, provider_tokens_per_day=INPUT_TOKENS + 1).status_code == 200
    assert site.chat(secret, "spend").status_code == 200
    site.wait_usage(secret, 1)
    refused = site.chat(secret, "more")
    assert refused.status_code == 429 and refused.json()["error"]["type"] == "rate_limit_error"
    assert "provider tokens" in refused.json()["error"]["message"]
    assert 1 <= int(refused.headers["retry-after"]) <= 86_400
    assert site.usage(secret)["total"]["calls"] == 1


def test_the_sdks_default_retries_give_up_at_once_on_a_refusal_until_tomorrow(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anthropic's SDK sleeps for whatever `Retry-After` says before each of its two default
    retries: without `x-should-retry: false` a key over its tokens for the day held the call asleep
    until midnight UTC."""
    key_id, secret = site.new_key()
    assert site.set_limits(key_id, provider_tokens_per_day=INPUT_TOKENS + 1).status_code == 200
    assert site.chat(secret, "spend").status_code == 200
    site.wait_usage(secret, 1)
    slept: list[str] = []

    def asleep(client: object, **retry: Any) -> None:
        slept.append(retry["response"].headers.get("retry-after", "?"))

    monkeypatch.setattr(anthropic.Anthropic, "_sleep_for_retry", asleep)
    monkeypatch.setattr(openai.OpenAI, "_sleep_for_retry", asleep)
    headers = {"X-Memory-Key": secret}
    claude = anthropic.Anthropic(base_url=site.url, api_key="sk", default_headers=headers)
    gpt = openai.OpenAI(base_url=f"{site.url}/v1", api_key="sk", default_headers=headers)
    with pytest.raises(anthropic.RateLimitError) as refused:
        claude.messages.create(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert slept == [] and refused.value.response.headers["x-should-retry"] == "false"
    with pytest.raises(openai.RateLimitError):
        gpt.chat.completions.create(model="gpt", messages=[{"role": "user", "content": "x"}])
    assert slept == []
    own = httpx.post(f"{site.url}/v1/memory/search", json={"query": "x"}, headers=headers)
    assert own.status_code == 429 and own.headers["x-should-retry"] == "false"


def test_concurrent_calls_at_a_limit_never_pass_it_and_other_keys_go_on(site: Site) -> None:
    limit, attempts = 5, 30
    key_id, secret = site.new_key()
    assert site.set_limits(key_id, requests_per_minute=limit).status_code == 200
    _, other = site.new_key()
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        limited = list(pool.map(lambda i: site.chat(secret, f"burst {i}", memvault={"mode": "off"}).status_code,
                                range(attempts)))
        others = list(pool.map(lambda i: site.chat(other, f"calm {i}").status_code, range(8)))
    # A minute may turn during the burst: at most one more minute's worth then.
    assert limited.count(200) in (limit, 2 * limit) and set(limited) == {200, 429}
    assert others == [200] * 8


def test_brain_calls_made_with_a_memory_key_count_against_its_limit_and_its_usage_stays_readable(site: Site) -> None:
    made = httpx.post(f"{site.url}/v1/admin/keys", json={"label": "brain-limited", "brain_scopes": ["personal"]},
                      headers=ADMIN_AUTH)
    assert made.status_code == 200, made.text
    key_id, secret = made.json()["id"], made.json()["key"]
    assert site.set_limits(key_id, requests_per_minute=1).status_code == 200
    bearer = {"Authorization": f"Bearer {secret}"}
    assert site.chat(secret, "first").status_code == 200
    search = httpx.post(f"{site.url}/v1/brain/facts/search", json={"query": "anything"}, headers=bearer)
    if search.status_code == 200:  # the UTC minute turned between the two calls: this one is its first
        search = httpx.post(f"{site.url}/v1/brain/facts/search", json={"query": "anything"}, headers=bearer)
    assert search.status_code == 429 and search.json()["error"]["code"] == "rate_limited", search.text
    assert search.headers["retry-after"]
    # Reading its own usage is never refused: a client at its limit can see why.
    assert httpx.get(f"{site.url}/v1/usage", headers={"X-Memory-Key": secret}).status_code == 200
    assert site.set_limits(key_id).status_code == 200
    assert httpx.post(f"{site.url}/v1/brain/facts/search", json={"query": "anything"}, headers=bearer).status_code == 200

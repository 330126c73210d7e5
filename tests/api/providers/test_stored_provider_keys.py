"""Provider keys held for a memory key, end to end: `memvault serve` in front of a fake provider
that answers a call without a key with its own 401, the keys stored with the CLI (in the data
folder, reading stdin or a named variable, and with `--url`), and the official SDKs given only the
memory key as their API key. The upstream gets the stored key, a call's own key wins, a call with
neither reaches the provider without one, a memory key never goes upstream, and nothing the
server printed holds a key."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from fake_upstream import FakeUpstream, ServerThread
from google import genai
from google.genai import types

from conftest import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from local_http import memvault_serve

MEMVAULT = Path(sys.executable).with_name("memvault")
SECRET = "c2VhbGluZy1zZWNyZXQtZm9yLXRoZS10ZXN0cy0zMmI="  # 32 bytes
ADMIN = "d" * 24 + "-admin-token-for-tests"
STORED = {"openai": "sk-proj-stored-openai-7Hk1", "anthropic": "sk-ant-stored-anthropic-5Rz2",
          "gemini": "AIzaStoredGeminiKey-3Wq9"}
DEADLINE_SECONDS = 60.0


@dataclass
class Setup:
    url: str
    upstream: FakeUpstream
    memory_key: str
    bare_key: str  # a memory key with no provider key stored
    log: Path
    env: dict[str, str]


def cli(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMVAULT), *args], env=env, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    data = tmp_path_factory.mktemp("stored-keys")
    upstream = FakeUpstream(require_key=True)
    with ServerThread(upstream) as fake:
        env = {name: value for name, value in os.environ.items() if not name.startswith("MEMVAULT_")}
        env.update(MEMVAULT_DATA_DIR=str(data), MEMVAULT_EMBEDDER="hash", MEMVAULT_PROVIDER_KEY_SECRET=SECRET,
                   MEMVAULT_ADMIN_TOKEN=ADMIN, MEMVAULT_OPENAI_BASE_URL=fake.url,
                   MEMVAULT_ANTHROPIC_BASE_URL=fake.url, MEMVAULT_GEMINI_BASE_URL=fake.url, MEMVAULT_LOG_LEVEL="debug")
        made = cli(env, "keys", "create", "--json")
        assert made.returncode == 0, made.stderr
        key_id, memory_key = made.stdout.strip().split('"id": "')[1].split('"')[0], made.stdout.split('"key": "')[1].split('"')[0]
        bare_key = cli(env, "keys", "create").stdout.strip()
        piped = cli(env, "keys", "provider", "set", key_id, "openai", stdin=STORED["openai"] + "\n")
        assert piped.returncode == 0, piped.stderr
        named = cli({**env, "ANTHROPIC_KEY_FOR_BOT": STORED["anthropic"]}, "keys", "provider", "set", key_id,
                    "anthropic", "--from-env", "ANTHROPIC_KEY_FOR_BOT")
        assert named.returncode == 0, named.stderr
        for ran in (piped, named):
            assert not any(value in ran.stdout + ran.stderr for value in STORED.values())
        log = data / "server.log"
        with log.open("wb") as sink, memvault_serve(env, output=sink) as url:
            remote = cli({**env, "MEMVAULT_DATA_DIR": ""}, "keys", "provider", "set", key_id, "gemini", "--url", url,
                         stdin=STORED["gemini"])
            assert remote.returncode == 0, remote.stderr
            yield Setup(url, upstream, memory_key, bare_key, log, env)


def last_received(setup: Setup, path_part: str) -> dict[str, str]:
    found = [r for r in setup.upstream.received if path_part in r.path]
    assert found, f"nothing reached {path_part}"
    return found[-1].headers


def no_memory_key_went_upstream(setup: Setup) -> None:
    for request in setup.upstream.received:
        assert not any("mk_" in value for value in request.headers.values()), request.headers
        assert "mk_" not in request.query


def test_the_listing_shows_which_providers_are_set_and_never_a_key(setup: Setup) -> None:
    key_id = cli(setup.env, "keys", "list").stdout.splitlines()[0].split("\t")[0]
    for where in ((), ("--url", setup.url)):
        env = {**setup.env, "MEMVAULT_DATA_DIR": ""} if where else setup.env
        listed = cli(env, "keys", "provider", "list", key_id, *where)
        assert listed.returncode == 0, listed.stderr
        assert [line.split("\t")[0::2] for line in listed.stdout.splitlines()] == [
            ["openai", "7Hk1"], ["anthropic", "5Rz2"], ["gemini", "3Wq9"]]
        assert not any(value in listed.stdout + listed.stderr for value in STORED.values())


def test_the_openai_sdk_with_only_the_memory_key_reaches_openai_with_the_stored_key(setup: Setup) -> None:
    client = openai.OpenAI(base_url=f"{setup.url}/v1", api_key=setup.memory_key, max_retries=0)
    answer = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Hi there."}])
    assert answer.choices[0].message.content == setup.upstream.answer
    assert last_received(setup, "/chat/completions")["authorization"] == f"Bearer {STORED['openai']}"
    embedded = client.embeddings.create(model="fake-embedding", input="x")  # a pass-through route too
    assert embedded.data[0].embedding == [0.25, -0.5, 0.125]
    assert last_received(setup, "/v1/embeddings")["authorization"] == f"Bearer {STORED['openai']}"
    no_memory_key_went_upstream(setup)
    memory = {"Authorization": f"Bearer {setup.memory_key}"}
    deadline = time.monotonic() + DEADLINE_SECONDS
    while "Hi there." not in httpx.get(f"{setup.url}/v1/memory", headers=memory, timeout=30).text:
        assert time.monotonic() < deadline, "the turn was not stored"
        time.sleep(0.05)


def test_the_anthropic_and_gemini_sdks_get_their_stored_keys(setup: Setup) -> None:
    claude = anthropic.Anthropic(base_url=setup.url, api_key=setup.memory_key, max_retries=0)
    message = claude.messages.create(model="claude-test", max_tokens=50,
                                     messages=[{"role": "user", "content": "Hello."}])
    assert message.content[0].type == "text"
    sent = last_received(setup, "/v1/messages")
    assert sent["x-api-key"] == STORED["anthropic"] and "authorization" not in sent
    gemini = genai.Client(api_key=setup.memory_key, http_options=types.HttpOptions(base_url=setup.url))
    reply = gemini.models.generate_content(model="gemini-test", contents="Hello.")
    assert reply.text == setup.upstream.answer
    assert last_received(setup, ":generateContent")["x-goog-api-key"] == STORED["gemini"]
    no_memory_key_went_upstream(setup)


def test_a_call_that_carries_its_own_provider_key_uses_it(setup: Setup) -> None:
    client = openai.OpenAI(base_url=f"{setup.url}/v1", api_key="sk-callers-own-key", max_retries=0,
                           default_headers={"X-Memory-Key": setup.memory_key})
    client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Mine."}])
    assert last_received(setup, "/chat/completions")["authorization"] == "Bearer sk-callers-own-key"
    httpx.post(f"{setup.url}/v1beta/models/g:generateContent", params={"key": "AIzaCallersOwn"},
               headers={"X-Memory-Key": setup.memory_key}, json={"contents": [{"parts": [{"text": "x"}]}]}, timeout=30)
    assert "x-goog-api-key" not in last_received(setup, "/v1beta/models/g:generateContent")


def test_a_call_with_neither_gets_the_providers_own_401(setup: Setup) -> None:
    before = len(setup.upstream.received)
    with pytest.raises(openai.AuthenticationError) as refused:
        openai.OpenAI(base_url=f"{setup.url}/v1", api_key=setup.bare_key, max_retries=0).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "No key anywhere."}])
    assert refused.value.status_code == 401 and "didn't provide an API key" in str(refused.value)
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=setup.url, api_key=setup.bare_key, max_retries=0).messages.create(
            model="claude-test", max_tokens=5, messages=[{"role": "user", "content": "None."}])
    reached = setup.upstream.received[before:]
    assert len(reached) == 2 and not any(KEY in r.headers for r in reached for KEY in ("authorization", "x-api-key"))
    no_memory_key_went_upstream(setup)
    with pytest.raises(openai.AuthenticationError):  # an unknown memory key is memvault's own 401
        openai.OpenAI(base_url=f"{setup.url}/v1", api_key="mk_nobody", max_retries=0).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "x"}])
    assert len(setup.upstream.received) == before + 2


def test_a_deleted_key_is_no_longer_used_and_nothing_printed_holds_a_key(setup: Setup) -> None:
    key_id = cli(setup.env, "keys", "list").stdout.splitlines()[0].split("\t")[0]
    deleted = cli(setup.env, "keys", "provider", "delete", key_id, "gemini")
    assert deleted.returncode == 0, deleted.stderr
    gemini = genai.Client(api_key=setup.memory_key, http_options=types.HttpOptions(base_url=setup.url))
    with pytest.raises(genai.errors.ClientError) as refused:
        gemini.models.generate_content(model="gemini-test", contents="Hello again.")
    assert refused.value.code == 401
    assert "x-goog-api-key" not in last_received(setup, ":generateContent")
    printed = setup.log.read_text(encoding="utf-8", errors="replace")
    assert "gemini-test%3AgenerateContent" in printed  # the access log, this test's own call, is in what was read
    assert not any(value in printed for value in STORED.values())
    assert setup.memory_key not in printed


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_no_memvault_credential_goes_upstream_whatever_carries_it(setup: Setup, provider: str) -> None:
    """A memory key or a brain credential a call carries beside the memory key it is made with,
    in a header of any name or in the query, stays here: the provider is a third party."""
    path, body = {
        "openai": ("/v1/chat/completions", {"model": "gpt-test", "messages": [{"role": "user", "content": "x"}]}),
        "anthropic": ("/v1/messages", {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}),
        "gemini": ("/v1beta/models/g:generateContent", {"contents": [{"parts": [{"text": "x"}]}]}),
    }[provider]
    brain_token = "bt_" + "b" * 43
    carried = {"X-Memory-Key": setup.memory_key, "Authorization": f"Bearer {setup.bare_key}",
               "X-Api-Key": setup.bare_key, "X-Goog-Api-Key": setup.bare_key, "X-Memvault-Brain-Token": brain_token,
               "X-Custom-Credential": f"Bearer {setup.memory_key}"}
    before = len(setup.upstream.received)
    # Whether the provider then takes the call (a key stored for it or not) is not the point here.
    httpx.post(f"{setup.url}{path}", params={"key": setup.memory_key, "alt": "json"}, headers=carried, json=body,
               timeout=30)
    (reached,) = setup.upstream.received[before:]
    sent = " ".join([reached.query, *reached.headers.values()])
    assert "mk_" not in sent and brain_token not in sent and "x-memvault-brain-token" not in reached.headers
    assert "alt=json" in reached.query  # the rest of the query goes on as it was


@pytest.mark.parametrize("path", ["/v1/models", "/v1/models/gemini-test", "/v1/files"])
def test_a_gemini_key_in_the_query_keeps_a_shared_path_gemini(setup: Setup, path: str) -> None:
    """A path OpenAI's and Gemini's APIs share, called as Gemini's REST examples call it (the key
    in `?key=`, no key header), is Gemini's: it goes with that key alone, never with the OpenAI key
    stored for the memory key."""
    before = len(setup.upstream.received)
    httpx.get(f"{setup.url}{path}", params={"key": "AIzaCallersOwn"}, headers={"X-Memory-Key": setup.memory_key},
              timeout=30)
    (reached,) = setup.upstream.received[before:]
    assert reached.query == "key=AIzaCallersOwn"
    assert not {"authorization", "x-api-key", "x-goog-api-key"} & set(reached.headers)
    # The access log's line for the call (the server's only one) shows the key's place, not the key.
    wait_until(lambda: f"GET {path}?key=[redacted" in setup.log.read_text(encoding="utf-8", errors="replace"),
               "the call's access log line")
    assert "AIzaCallersOwn" not in setup.log.read_text(encoding="utf-8", errors="replace")


def test_a_memory_key_in_the_query_names_no_caller_and_says_where_it_goes(setup: Setup) -> None:
    before = len(setup.upstream.received)
    refused = httpx.post(f"{setup.url}/v1beta/models/g:generateContent", params={"key": setup.memory_key},
                         json={"contents": [{"parts": [{"text": "x"}]}]}, timeout=30)
    assert refused.status_code == 401
    error = refused.json()["error"]
    assert error["status"] == "UNAUTHENTICATED" and "query string" in error["message"]
    assert "X-Memory-Key" in error["message"] and "x-goog-api-key" in error["message"]
    listing = httpx.get(f"{setup.url}/v1/models", params={"key": setup.memory_key}, timeout=30)
    assert listing.status_code == 401 and "query string" in listing.json()["error"]["message"]
    assert len(setup.upstream.received) == before
    assert setup.memory_key not in setup.log.read_text(encoding="utf-8", errors="replace")


def test_a_server_without_the_secret_says_why_it_cannot_use_a_stored_key(setup: Setup) -> None:
    """Forwarded without the stored key, the call would meet the provider's own 401 and no word why."""
    env = {name: value for name, value in setup.env.items() if name != "MEMVAULT_PROVIDER_KEY_SECRET"}
    with memvault_serve(env) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=setup.memory_key, max_retries=0)
        forwarded = len(setup.upstream.received)
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Hello?"}])
        assert refused.value.status_code == 503
        assert "MEMVAULT_PROVIDER_KEY_SECRET" in refused.value.message
        assert refused.value.body["code"] == "not_configured"  # type: ignore[index]
        assert len(setup.upstream.received) == forwarded
        # A key with nothing stored goes on as before: the provider answers it.
        bare = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-own", max_retries=0,
                             default_headers={"X-Memory-Key": setup.bare_key})
        assert bare.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Hi"}]).choices

"""The rest of each provider's API, as the official SDKs call it through memvault: files, batches,
moderations, stored completions, cached contents. Passed through behind the memory key, with the
provider's answer relayed as sent and nothing stored; memvault's own paths stay its own."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from google.genai import types
from test_router_endpoints import remember
from test_sdk_clients import anthropic_client, gemini_client, openai_client

from conftest import Router


def test_openai_files_batches_moderations_and_stored_completions(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    stored = remember(router, key, "My allotment is plot 12.")
    client = openai_client(router, secret)

    moderation = client.moderations.create(model="omni-moderation-latest", input="I love my allotment.")
    assert moderation.results[0].flagged is False
    assert router.upstream.received[-1].json == {"model": "omni-moderation-latest", "input": "I love my allotment."}
    uploaded = client.files.create(file=("calls.jsonl", b"{}\n"), purpose="batch")
    assert uploaded.id == "file-fake"
    sent = router.upstream.received[-1]
    # The multipart body and its boundary reach the provider as the SDK wrote them.
    assert sent.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert b'filename="calls.jsonl"' in sent.body and b'name="purpose"\r\n\r\nbatch' in sent.body
    assert [f.id for f in client.files.list()] == ["file-fake"]
    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert batch.id == "batch_fake" and router.upstream.received[-1].path == "/v1/batches"
    assert list(client.chat.completions.list()) == []
    assert (router.upstream.received[-1].method, router.upstream.received[-1].path) == ("GET", "/v1/chat/completions")
    assert router.upstream.received[-1].headers["authorization"] == "Bearer sk-test-openai"
    assert "x-memory-key" not in router.upstream.received[-1].headers
    later = "The rest of the API keeps nothing."
    assert set(remember(router, key, later)) == {*stored, later}


def test_anthropic_message_batches_and_gemini_caches(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    stored = remember(router, key, "My kayak is yellow.")
    batch = anthropic_client(router, secret).messages.batches.create(requests=[{
        "custom_id": "one",
        "params": {"model": "claude-test", "max_tokens": 8, "messages": [{"role": "user", "content": "My kayak?"}]},
    }])
    assert batch.id == "msgbatch_fake" and batch.processing_status == "in_progress"
    sent = router.upstream.received[-1]
    # A batch's requests are the app's own: they go as written, no memory added.
    assert sent.path == "/v1/messages/batches" and "system" not in sent.json["requests"][0]["params"]

    config = types.CreateCachedContentConfig(contents=["A long manual."], ttl="3600s")
    gemini = gemini_client(router, secret)  # kept: a collected client closes its connection
    cache = gemini.caches.create(model="gemini-test", config=config)
    assert cache.name == "cachedContents/fake"
    sent = router.upstream.received[-1]
    assert sent.path.endswith("/cachedContents") and sent.headers["x-goog-api-key"] == "g-test-key"
    later = "Batches and caches keep nothing."
    assert set(remember(router, key, later)) == {*stored, later}


def test_the_rest_of_an_api_still_needs_a_valid_memory_key(router: Router) -> None:
    calls = len(router.upstream.received)
    with pytest.raises(openai.AuthenticationError):
        openai_client(router, "mk_not_a_key").moderations.create(input="x")
    with pytest.raises(anthropic.AuthenticationError):
        anthropic_client(router, "mk_not_a_key").messages.batches.list()
    missing = httpx.post(f"{router.url}/v1beta/cachedContents", json={}, headers={"x-goog-api-key": "g"})
    assert missing.status_code == 401 and missing.json()["error"]["status"] == "UNAUTHENTICATED"
    assert len(router.upstream.received) == calls


@pytest.mark.parametrize(
    ("method", "path", "status", "envelope"),
    [
        ("PUT", "/v1/memory/search", 405, "memvault"),
        ("POST", "/v1/memory/nothing", 405, "memvault"),
        ("GET", "/v1/brain/nothing/at/all", 404, "memvault"),
        ("GET", "/v1/admin-ish", 404, "memvault"),
        ("GET", "/nothing", 404, "memvault"),
        # A dot segment would be resolved to another path of the provider's host.
        ("GET", "/v1/files/../../admin", 400, "openai"),
        ("GET", "/v1beta/models/./x", 400, "gemini"),
        ("DELETE", "/v1/files/%2e%2E/%2e%2e/admin", 400, "openai"),
    ],
)
def test_memvaults_own_paths_and_unsafe_paths_never_reach_the_provider(
    router: Router, key: tuple[str, str], method: str, path: str, status: int, envelope: str
) -> None:
    calls = len(router.upstream.received)
    # http.client sends the path exactly as written (httpx would resolve its dot segments first).
    connection = http.client.HTTPConnection(httpx.URL(router.url).host, httpx.URL(router.url).port, timeout=30)
    connection.request(method, path, body=b"{}", headers={"X-Memory-Key": key[1]})
    response = connection.getresponse()
    assert response.status == status
    error = json.loads(response.read())["error"]
    connection.close()
    if envelope == "memvault":
        assert set(error) == {"code", "message"}
    elif envelope == "gemini":
        assert error["code"] == status
    else:
        assert set(error) >= {"message", "type"}
    assert len(router.upstream.received) == calls


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("POST", "/v1/audio/speech-to-nowhere", {}),
        ("POST", "/v1/messages/batches/x/nothing", {"anthropic-version": "2023-06-01"}),
        ("POST", "/v1beta/models/g:unknownAction", {}),
        ("POST", "/v1/models/g:batchGenerateContent", {}),
    ],
)
def test_a_provider_path_memvault_does_not_know_gets_the_providers_own_answer(
    router: Router, key: tuple[str, str], method: str, path: str, headers: dict[str, str]
) -> None:
    response = httpx.request(method, f"{router.url}{path}", headers={"X-Memory-Key": key[1], **headers}, content=b"{}")
    assert response.status_code == 404 and response.content == router.upstream.sent[-1]
    assert (router.upstream.received[-1].method, router.upstream.received[-1].path) == (method, path)


def test_a_gemini_file_upload_opens_its_session_through_memvault(router: Router, key: tuple[str, str], tmp_path: Path) -> None:
    _, secret = key
    content = bytes(range(256)) * 6000
    (tmp_path / "notes.pdf").write_bytes(content)
    gemini = gemini_client(router, secret)  # kept: a collected client closes its connection
    uploaded = gemini.files.upload(file=tmp_path / "notes.pdf")
    assert uploaded.name == "files/fake" and uploaded.size_bytes == len(content)
    opened, sent = router.upstream.received[-2:]
    # The session is opened through memvault with the provider key. The SDK moves the session URL
    # the provider answers with onto its own base URL, so the bytes come through memvault too, and
    # the memory key reaches the provider with neither request.
    assert opened.path.endswith("/files") and opened.headers["x-goog-api-key"] == "g-test-key"
    assert opened.headers["x-goog-upload-protocol"] == "resumable"
    assert "upload_id=fake-upload" in sent.query and sent.body == content
    assert all("x-memory-key" not in request.headers and secret not in json.dumps(request.headers)
               for request in (opened, sent))

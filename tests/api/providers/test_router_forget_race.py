"""Through the real server: a client that forgets a routed turn by the ids its receipt header
names, while the server is still storing that turn in the background, keeps it forgotten, also
when the answer is too large for the journal of routed calls and is stored from memory. The
server's store is held at its start until the client's forget has been answered."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from conftest import DEADLINE_SECONDS, Router, wait_until
from memvault.core.memory import routed_calls

QUESTION = "Where did I leave the ferry tickets for the crossing to Mull?"
LONG_ANSWER = "In the glovebox of the blue car, under the road atlas. " * 20_000  # over the journal's 1 MB


class HeldStore:
    """The server's storing of a routed turn, held at its start until the test releases it."""

    def __init__(self) -> None:
        self.reached, self.released = threading.Event(), threading.Event()

    async def store(self, *args: object, **kwargs: object) -> object:
        self.reached.set()
        await asyncio.get_running_loop().run_in_executor(None, self.released.wait, DEADLINE_SECONDS)
        return await STORE(*args, **kwargs)  # type: ignore[arg-type]


STORE = routed_calls.store_conversation


@pytest.mark.parametrize("how", ["forget", "clear"])
def test_a_large_routed_answer_forgotten_while_the_server_stores_it_stays_forgotten(
        router: Router, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id, secret = router.new_key()
    held = HeldStore()
    monkeypatch.setattr(routed_calls, "store_conversation", held.store)
    monkeypatch.setattr(router.upstream, "answer", LONG_ANSWER)
    headers = {"Authorization": f"Bearer {secret}", "X-Session-ID": "mull"}
    answer = httpx.post(f"{router.url}/v1/chat/completions", headers=headers, timeout=DEADLINE_SECONDS,
                        json={"model": "gpt-test", "messages": [{"role": "user", "content": QUESTION}]})
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["choices"][0]["message"]["content"]) > routed_calls.MAX_JOURNALED_BYTES
    receipt = answer.headers["x-memory-receipt"]
    assert held.reached.wait(DEADLINE_SECONDS), "the server never began storing the turn"

    memory_headers = {"X-Memory-Key": secret}
    ids = [f"rt-{receipt}-u", f"rt-{receipt}-a"]
    if how == "forget":
        forgotten = httpx.post(f"{router.url}/v1/memory/forget", json={"ids": ids}, headers=memory_headers)
        assert forgotten.json() == {"forgotten": ids, "not_found": []}
    else:
        cleared = httpx.delete(f"{router.url}/v1/memory", params={"session_id": "mull"}, headers=memory_headers)
        assert cleared.status_code == 200, cleared.text
    held.released.set()
    wait_until(lambda: router.background.pending == 0, "the server's background work done")

    assert router.stored_texts(key_id, "mull") == []
    listed = httpx.get(f"{router.url}/v1/memory", params={"session_id": "mull"}, headers=memory_headers).json()
    assert listed["items"] == []
    found = httpx.post(f"{router.url}/v1/memory/search", headers=memory_headers,
                       json={"query": "ferry tickets glovebox", "session_id": "mull"}).json()
    assert found["items"] == []
    again = httpx.post(f"{router.url}/v1/memory/forget", json={"ids": ids}, headers=memory_headers).json()
    assert again["forgotten"] == []

"""MemoryClient over both transports against a real (in-process) memvault: the same shapes from
HTTP and from RPC, domain errors from both, retried calls that store nothing twice."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from client_support import BASE_URL, Memvault, Sleeps, plain

from memvault.client import Clockwork, HttpTransport, MemoryClient, RpcTransport
from memvault.core.admin.credential import OPERATOR
from memvault.core.brain.scopes import token_hash
from memvault.core.errors import Conflict, InvalidField, RateLimited, Unauthorized, UpstreamUnavailable
from memvault.core.retry import Backoff
from memvault.core.usage.operations import SET_LIMITS, perform
from memvault.runtime import rpc

BOT_TOKEN = "bot-brain-token"


class InProcessRpc:
    """A service binding to memvault's entrypoint, in process: each method runs the runtime
    function the entry hands it to, with the binding's props, and plain data both ways."""

    def __init__(self, memvault: Memvault, props: Mapping[str, Any]) -> None:
        self.memvault, self.props = memvault, dict(props)

    async def call(self, method: str, *args: Any) -> Any:
        deps, args = self.memvault.deps, plain(list(args))
        bound = {"getMemory": rpc.get_bound_memory, "saveMemory": rpc.save_bound_memory,
                 "searchMemory": rpc.search_bound_memory, "forgetMemory": rpc.forget_bound_memory}
        if method in bound:
            return plain(await bound[method](deps, self.props, *args))
        brain = {"brain_write": rpc.brain_write, "brain_search": rpc.brain_search, "brain_retire": rpc.brain_retire}
        return plain(await brain[method](deps, *args))


def both_transports(memvault: Memvault) -> dict[str, MemoryClient]:
    return {
        "http": memvault.client(),
        "rpc": MemoryClient(RpcTransport(InProcessRpc(memvault, {rpc.MEMORY_KEY_PROP: memvault.key_id}))),
    }


async def test_http_and_rpc_answer_in_the_same_shapes(memvault: Memvault) -> None:
    answers: dict[str, Any] = {}
    for name, client in both_transports(memvault).items():
        session = f"chat-{name}"
        ack = await client.save(session, [{"role": "user", "content": f"My locker over {name} is number 314."}],
                                {"chat": name})
        page = await client.get(session, limit=10)
        found = await client.search("locker number", session_id=session)
        answers[name] = (ack, page, found)
        assert ack["messages_accepted"] == 1 and len(ack["message_ids"]) == 1
        assert set(page) == {"session_id", "limit", "offset", "items"} and page["session_id"] == session
        assert page["items"][0]["metadata"] == {"chat": name}
        assert any("314" in item["text"] for item in found["items"])
    http, over_rpc = answers["http"], answers["rpc"]
    for from_http, from_rpc in zip(http, over_rpc, strict=True):
        assert set(from_http) == set(from_rpc)
    assert set(http[1]["items"][0]) == set(over_rpc[1]["items"][0])
    assert set(http[2]["items"][0]) == set(over_rpc[2]["items"][0])


async def test_refusals_arrive_as_domain_errors_over_both(memvault: Memvault) -> None:
    for client in both_transports(memvault).values():
        with pytest.raises(InvalidField):
            await client.save(None, [{"role": "narrator", "content": "x"}])
    stranger = MemoryClient(RpcTransport(InProcessRpc(memvault, {})))
    with pytest.raises(Unauthorized):
        await stranger.get()
    memvault.key = "mk_wrong"
    with pytest.raises(Unauthorized):
        await memvault.client().get()


async def test_a_key_over_its_limit_gets_rate_limited_with_the_wait_the_server_named(memvault: Memvault) -> None:
    memvault.deps.clock = lambda: 1_767_225_620.0  # 20 s into a UTC minute: 40 s left in it
    await perform(memvault.deps, OPERATOR, SET_LIMITS, {"id": memvault.key_id, "requests_per_minute": 1})
    client = memvault.client()
    await client.search("anything")
    with pytest.raises(RateLimited) as refused:
        await client.search("anything")
    assert refused.value.retry_after == 40


async def test_a_save_whose_answer_was_lost_is_retried_and_stored_once(memvault: Memvault) -> None:
    sleeps = Sleeps()
    client = memvault.client(clockwork=Clockwork(sleep=sleeps))
    memvault.network.lose_answers = 1
    ack = await client.save("s", [{"role": "user", "content": "The spare key is under the blue pot."}])
    # The first try stored it; the retry finds it held: its id is named, nothing is taken twice.
    assert ack["messages_accepted"] == 0 and len(ack["message_ids"]) == 1 and len(sleeps.waits) == 1
    assert [m["content"] for m in await memvault.page("s")] == ["The spare key is under the blue pot."]
    posts = [url for method, url in memvault.network.sent if method == "POST"]
    assert len(posts) == 2


async def test_an_unreachable_memvault_is_retried_then_reported(memvault: Memvault) -> None:
    sleeps = Sleeps()
    client = memvault.client(clockwork=Clockwork(sleep=sleeps), backoff=Backoff(attempts=3, base_seconds=0.1, max_seconds=1.0))
    memvault.network.down = True
    with pytest.raises(UpstreamUnavailable):
        await client.get("s")
    assert len(memvault.network.sent) == 3 and len(sleeps.waits) == 2


async def test_the_bot_writes_a_fact_and_reads_its_own_write(memvault: Memvault) -> None:
    credentials = {token_hash(BOT_TOKEN): {"name": "telegram-bot", "scopes": ["family"], "writer": True}}
    memvault.deps.settings = memvault.deps.settings.replace(brain_credentials=json.dumps(credentials))
    transports = {
        "http": HttpTransport(memvault.network, BASE_URL, memvault.key, BOT_TOKEN),
        "rpc": RpcTransport(InProcessRpc(memvault, {rpc.MEMORY_KEY_PROP: memvault.key_id}), BOT_TOKEN),
    }
    for name, transport in transports.items():
        client = MemoryClient(transport)
        written = await client.remember(f"Grandma's birthday is 12 May, noted over {name}.", scope="family",
                                        source=f"bot:{name}")
        found = await client.recall_facts(f"birthday {name}")
        assert found[0]["id"] == written["ids"][0]
        retired = await client.retire_fact(written["ids"][0], f"noted twice, once over {name}")
        assert retired["retirement"]["reason"] == f"noted twice, once over {name}"
        assert await client.recall_facts(f"birthday {name}") == []
        with pytest.raises(Conflict):
            await client.retire_fact(written["ids"][0], "again")
    without_token = MemoryClient(RpcTransport(InProcessRpc(memvault, {rpc.MEMORY_KEY_PROP: memvault.key_id})))
    with pytest.raises(Unauthorized):
        await without_token.remember("x", scope="family", source="bot")

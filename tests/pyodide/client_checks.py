"""The memory client inside Pyodide, as another Worker runs it: a bot's ``LazyMemory`` over its
Durable Object's SQL (the DO SQL stand-in) and ``waitUntil``, reaching memvault's real Worker
entry through a service-binding stand-in (structuredClone both ways, the binding's props on the
entry's ``ctx``), with memvault over miniflare's D1 and the Vault stand-in. Run by runner.py; each
check takes the harness context."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import js
from pyodide.ffi import create_proxy

from memvault.adapters.cloudflare.background import WaitUntilTasks
from memvault.adapters.cloudflare.convert import to_js
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.rpc_stub import RpcStub
from memvault.client import LazyMemory, MemoryClient, RpcTransport
from memvault.core.errors import Unauthorized
from memvault.core.retry import Backoff


async def context() -> Any:
    return js.memvaultTest


class Memvault:
    """memvault's Worker behind a service binding; ``down`` makes every call fail the way an
    unreachable Worker does."""

    def __init__(self, h: Any, env: Any, props: dict[str, Any]) -> None:
        self.h, self.env, self.props = h, env, props
        self.down = False
        self.ctx = h.newContext()
        self.ctx.props = to_js(props)
        # Kept alive for the whole check: the binding stand-in calls it on every RPC.
        self.handler = create_proxy(self.handle)
        self.binding = h.newServiceBinding(self.handler)

    async def handle(self, method: Any, args: Any) -> Any:
        from entry import Default

        if self.down:
            raise ConnectionError("Network connection lost")
        return await getattr(Default(self.ctx, self.env), str(method))(*args)

    async def settle(self) -> None:
        await js.Promise.all(self.ctx.promises)


async def started_memvault(h: Any) -> Memvault:
    from cloudflare_runtime_checks import workers_env

    from memvault.core.credentials.keys import create_key
    from memvault.runtime.workers import build_deps

    env = await workers_env(h)
    key, _ = await create_key(build_deps(env, h.newContext()).db, "telegram-bot", now=1_700_000_000.0)
    return Memvault(h, env, {"memoryKeyId": key.id})


class Agent:
    """A bot's Durable Object: its own SQL storage and ctx outlive any one LazyMemory."""

    def __init__(self, h: Any, memvault: Memvault) -> None:
        self.storage = DurableObjectSql(h.newDurableObjectStorage())
        self.ctx = h.newContext()
        self.memvault = memvault

    def start(self) -> LazyMemory:
        client = MemoryClient(RpcTransport(RpcStub(self.memvault.binding)), backoff=Backoff(attempts=1))
        return LazyMemory(client, self.storage, WaitUntilTasks(self.ctx), "chat-77", delivery_budget_seconds=0.0)

    async def settle(self) -> None:
        await js.Promise.all(self.ctx.promises)


async def check_the_client_loads_without_fastapi_or_pydantic(h: Any) -> None:
    """A bot's bundle holds neither: the client imports afresh with both made unimportable (the
    Worker entry, imported first in this interpreter, already brought them in)."""
    heavy = ("fastapi", "pydantic", "pydantic_core", "starlette")
    saved = {name: module for name, module in sys.modules.items()
             if name == "memvault.client" or name.startswith(("memvault.client.", *heavy))}
    for name in saved:
        del sys.modules[name]
    for name in heavy:
        sys.modules[name] = None  # type: ignore[assignment]  # importing it now raises ImportError
    try:
        importlib.import_module("memvault.client")
    finally:
        for name in [*heavy, *(n for n in sys.modules if n.startswith("memvault.client"))]:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


async def check_the_client_interface_over_a_service_binding(h: Any) -> None:
    memvault = await started_memvault(h)
    client = MemoryClient(RpcTransport(RpcStub(memvault.binding)))
    ack = await client.save("chat-1", [{"role": "user", "content": "The lighthouse keeper is Ines.", "id": "ines"}],
                            {"via": "rpc"})
    assert ack["message_ids"] == ["ines"] and ack["messages_accepted"] == 1 and ack["updated_at"] > 0, ack
    page = await client.get("chat-1", limit=5)
    assert page["session_id"] == "chat-1" and [m["metadata"] for m in page["items"]] == [{"via": "rpc"}], page
    await memvault.settle()
    found = await client.search("who keeps the lighthouse", session_id="chat-1")
    assert any("Ines" in item["text"] for item in found["items"]), found
    memvault.props.clear()
    memvault.ctx.props = to_js({})
    try:
        await client.get("chat-1")
    except Unauthorized:
        pass
    else:
        raise AssertionError("a binding without props was served")


async def check_lazy_memory_saves_survive_an_outage_and_an_eviction(h: Any) -> None:
    memvault = await started_memvault(h)
    agent = Agent(h, memvault)
    memvault.down = True
    first = agent.start()
    assert first.get().messages == ()
    first.save([{"role": "user", "content": "I parked on level 3."}])
    first.save([{"role": "assistant", "content": "Level 3, noted."}], {"turn": 2})
    delivery = await first.flush()
    await agent.settle()
    assert delivery.delivered == 0 and delivery.queued == 2 and delivery.error == "StorageUnavailable", delivery
    assert first.get().degraded
    del first  # evicted with its saves still queued in its Durable Object storage

    memvault.down = False
    memory = agent.start()
    recall = memory.get()  # the next start answers from storage and replays the queue
    assert [m["content"] for m in recall.messages] == ["I parked on level 3.", "Level 3, noted."], recall
    await agent.settle()
    await memvault.settle()
    page = await MemoryClient(RpcTransport(RpcStub(memvault.binding))).get("chat-77")
    assert [m["content"] for m in reversed(page["items"])] == ["I parked on level 3.", "Level 3, noted."]
    assert [m["metadata"] for m in reversed(page["items"])] == [None, {"turn": 2}]
    after = memory.get()
    assert after.queued == 0 and after.fresh and not after.degraded, after


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    check_the_client_loads_without_fastapi_or_pydantic,
    check_the_client_interface_over_a_service_binding,
    check_lazy_memory_saves_survive_an_outage_and_an_eviction,
]

"""A memory key over its limits is refused over RPC, both method families, with the same error
the HTTP routes answer 429 with; nothing of a refused call is stored, the key's other calls wait
for the next minute, and another key goes on."""

from __future__ import annotations

from typing import Any

import pytest

from local_deps import MakeDeps
from memvault.core.admin.credential import OPERATOR
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.errors import RateLimited
from memvault.core.usage.ledger import add_usage
from memvault.core.usage.meter import CallUsage
from memvault.core.usage.operations import SET_LIMITS, perform
from memvault.runtime import rpc

# 20 s into a UTC minute, so a call 40 s later is in the next one.
START = 1_767_225_620.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def note(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


async def limited_key(deps: Deps, **limits: int) -> tuple[str, str]:
    key, secret = await create_key(deps.db, "limited", deps.clock())
    await perform(deps, OPERATOR, SET_LIMITS, {"id": key.id, **limits})
    return key.id, secret


async def stored_texts(deps: Deps, secret: str) -> list[str]:
    page = await rpc.get_memory(deps, secret, None, 50)
    return sorted(item["content"] for item in page["items"])


async def test_both_rpc_families_refuse_a_key_over_its_requests_per_minute(make_deps: MakeDeps) -> None:
    clock = Clock()
    deps = make_deps(clock=clock)
    key_id, secret = await limited_key(deps, requests_per_minute=2)
    props = {rpc.MEMORY_KEY_PROP: key_id}
    await rpc.save_memory(deps, secret, None, note("The shed key is under the blue pot."))
    await rpc.save_bound_memory(deps, props, None, note("The gate code is 4821."))
    refusals = [
        rpc.save_memory(deps, secret, None, note("refused over the alias")),
        rpc.save_bound_memory(deps, props, None, note("refused over the client interface")),
        rpc.search_bound_memory(deps, props, "gate code"),
        rpc.get_memory(deps, secret),
        rpc.forget_bound_memory(deps, props, ["anything"]),
    ]
    for refused_call in refusals:
        with pytest.raises(RateLimited) as refused:
            await refused_call
        assert refused.value.status == 429 and refused.value.code == "rate_limited"
        assert refused.value.retry_after == 40
        assert "2 requests a minute" in refused.value.message and "40 s" in refused.value.message

    _, other = await create_key(deps.db, "calm", deps.clock())
    await rpc.save_memory(deps, other, None, note("Another key stores as it likes."))
    assert await stored_texts(deps, other) == ["Another key stores as it likes."]

    clock.now += 40
    assert await stored_texts(deps, secret) == ["The gate code is 4821.", "The shed key is under the blue pot."]
    found = await rpc.search_bound_memory(deps, props, "gate code")
    assert found["items"][0]["text"] == "The gate code is 4821."


async def test_rpc_is_refused_once_the_days_provider_tokens_are_spent(make_deps: MakeDeps) -> None:
    clock = Clock()
    deps = make_deps(clock=clock)
    key_id, secret = await limited_key(deps, provider_tokens_per_day=100)
    await rpc.save_memory(deps, secret, None, note("Before the routed calls."))
    # What the memory router's calls of the day added (the ledger is where they are counted).
    await add_usage(deps.db, key_id, clock.now, "gpt-test", CallUsage(calls=2, input_tokens=60, output_tokens=40))
    with pytest.raises(RateLimited) as refused:
        await rpc.save_bound_memory(deps, {rpc.MEMORY_KEY_PROP: key_id}, None, note("After the limit."))
    assert "100 provider tokens a day" in refused.value.message
    assert refused.value.retry_after == 86_400 - 20
    clock.now += 86_400
    assert await stored_texts(deps, secret) == ["Before the routed calls."]


async def test_bad_input_over_rpc_is_refused_as_such_before_the_limit_is_counted(make_deps: MakeDeps) -> None:
    deps = make_deps(clock=Clock())
    _, secret = await limited_key(deps, requests_per_minute=1)
    await rpc.save_memory(deps, secret, None, note("The only call this minute."))
    # Input is checked before the limit is counted: a bad call neither spends nor learns the limit.
    with pytest.raises(Exception) as bad:
        await rpc.save_memory(deps, secret, None, [{"role": "robot", "content": "beep"}])
    assert getattr(bad.value, "status", None) == 422

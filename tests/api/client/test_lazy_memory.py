"""LazyMemory against a real (in-process) memvault over HTTP: construction touches nothing, get
answers at once and then with fresh data, saves wait in the agent's own storage and survive an
eviction and an outage, and arrive in order."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from client_support import CountingBackground, CountingSql, Memvault, Sleeps

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.client import Clockwork, LazyMemory, MemoryClient
from memvault.core.retry import Backoff

ONE_TRY = Backoff(attempts=1)


class Agent:
    """One Durable Object agent's pieces: its storage outlives any one LazyMemory (an eviction
    drops the instance, not the storage)."""

    def __init__(self, memvault: Memvault, path: Path) -> None:
        self.memvault = memvault
        self.sql = CountingSql(SqliteSql(path))
        self.background = CountingBackground()
        self.sleeps = Sleeps()

    def start(self, session_id: str | None = "chat-1", clock: Callable[[], float] = time.time,
              rand: Callable[[], float] = random.random, **options: Any) -> LazyMemory:
        clockwork = Clockwork(clock, self.sleeps, rand)
        client: MemoryClient = self.memvault.client(backoff=ONE_TRY, clockwork=clockwork)
        return LazyMemory(client, self.sql, self.background, session_id, clockwork=clockwork, **options)


def contents(messages: Any) -> list[str]:
    return [m["content"] for m in messages]


async def test_construction_does_no_io_at_all(memvault: Memvault, tmp_path: Path) -> None:
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    LazyMemory(memvault.client(), agent.sql, agent.background, "chat-1")
    assert (agent.sql.calls, agent.background.calls, len(memvault.network.sent)) == (0, 0, 0)


async def test_get_answers_at_once_then_with_fresh_data(memvault: Memvault, tmp_path: Path) -> None:
    await memvault.client().save("chat-1", [{"role": "user", "content": "My dog is called Pixel."}])
    sent_before = len(memvault.network.sent)
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    memory = agent.start()
    first = memory.get()
    assert (first.messages, first.fresh, first.degraded) == ((), False, False)
    assert len(memvault.network.sent) == sent_before, "get must not wait for memvault"
    await agent.background.drain()
    later = memory.get()
    assert later.fresh and contents(later.messages) == ["My dog is called Pixel."]
    assert agent.background.calls == 1, "a fresh view is not fetched again"


async def test_saves_return_at_once_and_flush_delivers_them_in_order(memvault: Memvault, tmp_path: Path) -> None:
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    memory = agent.start()
    memory.get()
    for i in range(5):
        memory.save([{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}],
                     {"turn": i})
    assert not [m for m, url in memvault.network.sent if m == "POST"], "save must not send"
    assert contents(memory.get().messages)[-2:] == ["question 4", "answer 4"]
    delivery = await memory.flush()
    assert (delivery.delivered, delivery.queued, delivery.refused, delivery.error) == (5, 0, 0, None)
    stored = await memvault.page("chat-1")
    assert contents(stored) == [f"{kind} {i}" for i in range(5) for kind in ("question", "answer")]
    assert [m["metadata"] for m in stored[::2]] == [{"turn": i} for i in range(5)]
    # Five saves with different metadata: each is its own call, in queue order.
    assert len([m for m, url in memvault.network.sent if m == "POST"]) == 5


async def test_saves_of_one_kind_go_out_batched(memvault: Memvault, tmp_path: Path) -> None:
    memory = Agent(memvault, tmp_path / "agent.sqlite3").start(batch_messages=4)
    for i in range(6):
        memory.save([{"role": "user", "content": f"line {i}"}])
    delivery = await memory.flush()
    assert delivery.delivered == 6
    assert len([m for m, url in memvault.network.sent if m == "POST"]) == 2  # 4 messages, then 2
    assert contents(await memvault.page("chat-1")) == [f"line {i}" for i in range(6)]


async def test_queued_saves_survive_an_eviction_and_are_replayed_on_the_next_start(
    memvault: Memvault, tmp_path: Path
) -> None:
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    evicted = agent.start()
    evicted.save([{"role": "user", "content": "I moved to Porto in May."}])
    evicted.save([{"role": "assistant", "content": "Porto, noted."}])
    del evicted  # the Durable Object is evicted before it flushed
    assert await memvault.page("chat-1") == []

    memory = agent.start()
    first = memory.get()  # the next start: answers from storage, and sends what was left
    assert contents(first.messages) == ["I moved to Porto in May.", "Porto, noted."]
    assert first.queued == 2
    await agent.background.drain()
    assert contents(await memvault.page("chat-1")) == ["I moved to Porto in May.", "Porto, noted."]
    after = memory.get()
    assert after.queued == 0 and after.fresh
    assert contents(after.messages) == ["I moved to Porto in May.", "Porto, noted."]


async def test_an_outage_degrades_reads_keeps_saves_queued_and_delivers_them_later(
    memvault: Memvault, tmp_path: Path
) -> None:
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    now = [1000.0]
    memory = agent.start(clock=lambda: now[0], rand=lambda: 0.5, delivery_budget_seconds=0.0)
    memvault.network.down = True
    memory.get()
    await agent.background.drain()
    read = memory.get()
    assert read.degraded and not read.fresh and read.messages == ()
    for i in range(3):
        memory.save([{"role": "user", "content": f"offline {i}"}])
        delivery = await memory.flush()
        assert delivery.delivered == 0 and delivery.error == "UpstreamUnavailable"
    assert memory.get().queued == 3 and contents(memory.get().messages) == [f"offline {i}" for i in range(3)]
    # Each failure pushed the next try further out (exponential, jittered); inside the wait a
    # flush sends nothing.
    sent = len(memvault.network.sent)
    assert (await memory.flush()).queued == 3 and len(memvault.network.sent) == sent

    memvault.network.down = False
    now[0] += 3600
    delivery = await memory.flush()
    assert (delivery.delivered, delivery.queued) == (3, 0)
    assert contents(await memvault.page("chat-1")) == [f"offline {i}" for i in range(3)]
    memory.get()
    await agent.background.drain()
    assert not memory.get().degraded and memory.get().fresh


async def test_backoff_between_tries_grows_while_memvault_stays_down(memvault: Memvault, tmp_path: Path) -> None:
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    now = [0.0]

    async def sleep(seconds: float) -> None:
        agent.sleeps.waits.append(seconds)
        now[0] += seconds

    client = memvault.client(backoff=ONE_TRY)
    memory = LazyMemory(client, agent.sql, agent.background, "chat-1", clockwork=Clockwork(lambda: now[0], sleep, lambda: 1.0),
                        backoff=Backoff(base_seconds=1.0, max_seconds=8.0),
                        delivery_budget_seconds=30.0)
    memvault.network.down = True
    memory.save([{"role": "user", "content": "kept"}])
    delivery = await memory.flush()
    assert delivery.queued == 1 and delivery.error == "UpstreamUnavailable"
    assert agent.sleeps.waits[:4] == [1.0, 2.0, 4.0, 8.0]
    assert all(wait == 8.0 for wait in agent.sleeps.waits[3:])


async def test_a_save_memvault_refuses_for_good_is_set_aside_and_the_rest_arrive(
    memvault: Memvault, tmp_path: Path
) -> None:
    memory = Agent(memvault, tmp_path / "agent.sqlite3").start()
    memory.save([{"role": "user", "content": "before"}])
    memory.save([{"role": "narrator", "content": "not a role memvault knows"}], {"bad": True})
    memory.save([{"role": "user", "content": "after"}])
    delivery = await memory.flush()
    assert (delivery.delivered, delivery.refused, delivery.queued) == (2, 1, 0)
    assert contents(await memvault.page("chat-1")) == ["before", "after"]


async def test_a_400_that_is_not_memvaults_own_keeps_the_save_queued(memvault: Memvault, tmp_path: Path) -> None:
    now = [0.0]
    memory = Agent(memvault, tmp_path / "agent.sqlite3").start(clock=lambda: now[0], delivery_budget_seconds=0.0)
    memvault.network.garble = 1
    memory.save([{"role": "user", "content": "kept through a proxy's 400"}])
    delivery = await memory.flush()
    assert (delivery.refused, delivery.queued, delivery.error) == (0, 1, "UpstreamUnavailable")
    now[0] += 3600
    assert (await memory.flush()).delivered == 1
    assert contents(await memvault.page("chat-1")) == ["kept through a proxy's 400"]


async def test_fresh_waits_briefly_for_memvaults_answer(memvault: Memvault, tmp_path: Path) -> None:
    await memvault.client().save("chat-1", [{"role": "user", "content": "The plumber comes at nine."}])
    agent = Agent(memvault, tmp_path / "agent.sqlite3")
    recall = await agent.start().fresh(5.0)
    assert recall.fresh and contents(recall.messages) == ["The plumber comes at nine."]
    memvault.network.down = True
    offline = await Agent(memvault, tmp_path / "other.sqlite3").start().fresh(5.0)
    assert offline.degraded and not offline.fresh and offline.messages == ()

"""A large write's secret gate runs where it holds up no other caller: locally on a worker thread,
so the event loop answers others while it runs (``core/cpu.py``); a small one runs in place."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from local_deps import MakeDeps
from memvault.adapters.local.cpu import ThreadCpu
from memvault.api.memory_options import parse_options
from memvault.core import memory
from memvault.core.cpu import OFF_LOOP_CHARS, InlineCpu
from memvault.core.memory.chat_calls import Conversation, Reply, Turn, off
from memvault.core.memory.routed_calls import RoutedCall
from memvault.core.models import Message
from memvault.core.usage.meter import Meter

T = TypeVar("T")
SECRET = "my password is Hunter2024!"


class CountingCpu:
    """Runs work in place, counting what it was handed."""

    def __init__(self) -> None:
        self.handed = 0

    async def run(self, work: Callable[[], T]) -> T:
        self.handed += 1
        return await InlineCpu().run(work)


async def test_work_on_the_thread_leaves_the_loop_free() -> None:
    # The work can only finish once the loop has run another task: in place, it would wait forever.
    loop_ran = threading.Event()

    def work() -> bool:
        return loop_ran.wait(timeout=60)

    async def other_caller() -> None:
        loop_ran.set()

    running = asyncio.ensure_future(ThreadCpu().run(work))
    await other_caller()
    assert await running is True


async def test_the_thread_sees_the_callers_context_and_its_errors_reach_the_caller() -> None:
    import contextvars

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="none")
    marker.set("caller")
    cpu = ThreadCpu()
    assert await cpu.run(marker.get) == "caller"

    def fails() -> None:
        raise ValueError("bad")

    try:
        await cpu.run(fails)
    except ValueError as exc:
        assert str(exc) == "bad"
    else:
        raise AssertionError("the error was lost")


async def test_a_large_write_is_gated_off_the_loop_and_a_small_one_in_place(make_deps: MakeDeps) -> None:
    deps = make_deps()
    counting = CountingCpu()
    deps.cpu = counting
    await memory.store_conversation(deps, "k1", [Message("user", f"hello, {SECRET}", 1.0, "m1")])
    assert counting.handed == 0
    filler = "the cat went home after a long day " * (OFF_LOOP_CHARS // 30)
    result = await memory.store_conversation(
        deps, "k1", [Message("user", filler, 2.0, "m2"), Message("user", SECRET, 3.0, "m3")])
    assert counting.handed == 1
    assert result.redactions == ("password",)
    page = await memory.read_memory(deps, "k1", None, 10, 0)
    assert all("Hunter2024" not in str(m["content"]) for m in page)


async def test_a_routed_turn_with_a_large_message_is_gated_off_the_loop(make_deps: MakeDeps) -> None:
    deps = make_deps()
    counting = CountingCpu()
    deps.cpu = counting
    said = "the cat went home after a long day " * (OFF_LOOP_CHARS // 30) + SECRET
    conversation = Conversation((Turn("user", said),), "m")
    call = RoutedCall(deps, "k1", conversation, parse_options({}, 800), off(), False, Meter())
    await call.answer(Reply("noted"), 1.0)
    assert counting.handed == 1
    assert all("Hunter2024" not in message.content for message in call.call.turn)
    assert [message.role for message in call.call.turn] == ["user", "assistant"]

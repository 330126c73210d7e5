"""The example TypeScript bot in real workerd, using the package in `clients/typescript/` over a
real service binding (props naming the memory key) to the real memvault Worker: a save, a get and a
search; an answer refused for good by memvault set aside; the chat agent built without waiting on
memvault, with memvault slow (behind a link that delays each call) or down; and, while memvault is
stopped, the bot still answering, its saves queued in the agents' SQLite and flushed, in order and
once, after memvault is back, without another message. The measured times are printed at the end."""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tier_session import MEASURED, STARTS, Tier
from tier_stack import MainStack
from tier_typescript import SLOW_SECONDS, build_typescript_bots
from wrangler_dev import WranglerDev, wait_for

TS_BOT, SLOW_BOT = "TS_BOT", "TS_BOT_SLOW"


@pytest.fixture(scope="module")
def bots(tier: Tier) -> Iterator[WranglerDev]:
    dev = build_typescript_bots(tier.work, tier.main())
    try:
        dev.start().wait_ready("/")
        STARTS[dev.name] = dev.timing
        yield dev
    finally:
        dev.stop()


def chat(bots: WranglerDev, text: str, chat_id: str, bot: str = TS_BOT) -> tuple[dict[str, Any], float]:
    """A message to the bot, as a chat front end sends it: its answer and how long it took."""
    started = time.perf_counter()
    answer = httpx.post(f"{bots.url}/to/{bot}/chat/{chat_id}", json={"text": text}, timeout=120)
    took = time.perf_counter() - started
    assert answer.status_code == 200, answer.text
    return dict(answer.json()), took


def view(bots: WranglerDev, chat_id: str, wait: float = 0, bot: str = TS_BOT) -> dict[str, Any]:
    answer = httpx.get(f"{bots.url}/to/{bot}/chat/{chat_id}/memory", params={"wait": wait}, timeout=120)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def in_memvault(stack: MainStack, chat_id: str) -> list[str]:
    """The chat's session as memvault holds it, oldest first, read over HTTP with the key the bot's props name."""
    page = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": f"chat-{chat_id}", "limit": 50})
    assert page.status_code == 200, page.text
    return [item["content"] for item in reversed(page.json()["items"])]


def new_chat() -> str:
    return uuid.uuid4().hex[:10]


def test_the_bot_saves_reads_and_searches_through_the_package(bots: WranglerDev, stack: MainStack) -> None:
    chat_id = new_chat()
    said, _ = chat(bots, "My locker code is 5531.", chat_id)
    assert said["reply"] == "Noted."
    wait_for("the turn in memvault", lambda: in_memvault(stack, chat_id) == ["My locker code is 5531.", "Noted."], 60)
    asked, _ = chat(bots, "What is my locker code?", chat_id)
    assert asked["reply"].startswith("From memory:") and "5531" in asked["reply"]
    # A new agent for a chat memvault already holds: get() answers at once, then with memvault's page.
    other = new_chat()
    stored = stack.api("POST", "/v1/memory", stack.secrets.memory_key,
                       json={"session_id": f"chat-{other}", "messages": [{"role": "user", "content": "Told on the web."}]})
    assert stored.status_code == 200, stored.text
    fetched = view(bots, other, wait=30)
    assert fetched["fresh"] and not fetched["degraded"]
    assert [m["content"] for m in fetched["messages"]] == ["Told on the web."]


def test_a_save_memvault_refuses_for_good_is_set_aside(bots: WranglerDev) -> None:
    # A session id longer than memvault's 200 characters: memvault's InvalidField crosses RPC and
    # the client reads it as final, so the save leaves the queue for the refused table.
    chat_id = "x" * 210
    chat(bots, "hello", chat_id)
    settled = wait_for("the save set aside", lambda: (v := view(bots, chat_id))["refused"] == 1 and v, 60)
    assert settled["queued"] == 0


def first_answers(bots: WranglerDev, bot: str, count: int = 3) -> tuple[list[dict[str, Any]], float]:
    """``count`` new chats' first answers (each a new agent) and the median time they took."""
    answers, times = [], []
    for _ in range(count):
        answer, took = chat(bots, "The bins go out on Tuesday.", new_chat(), bot)
        answers.append(answer)
        times.append(took)
    return answers, statistics.median(times)


def test_the_agent_is_built_without_waiting_on_a_slow_memvault(bots: WranglerDev, stack: MainStack) -> None:
    chat(bots, "Warm-up for this measurement.", new_chat())
    _, up = first_answers(bots, TS_BOT)
    slow_chat = new_chat()
    answer, _ = chat(bots, "The bins go out on Tuesday.", slow_chat, SLOW_BOT)
    # Answered before memvault's page could arrive (every call takes SLOW_SECONDS), the save queued.
    assert answer["reply"] == "Noted." and not answer["memory"]["fresh"] and answer["memory"]["queued"] == 1
    wait_for("the slow save in memvault", lambda: in_memvault(stack, slow_chat) == ["The bins go out on Tuesday.", "Noted."], 90)
    assert view(bots, slow_chat, bot=SLOW_BOT)["queued"] == 0
    answers, slow = first_answers(bots, SLOW_BOT)
    assert all(not a["memory"]["fresh"] for a in answers)
    MEASURED.append(f"TypeScript bot, a new chat's first answer (its agent built, LazyMemory read, the turn queued; "
                    f"median of 3): memvault up {up * 1000:.0f} ms, memvault {SLOW_SECONDS} s slow per call "
                    f"{slow * 1000:.0f} ms")


def test_with_memvault_down_the_bot_answers_and_its_saves_are_flushed_once_memvault_is_back(
        bots: WranglerDev, stack: MainStack) -> None:
    # Last in this module: it stops memvault's Worker and starts it again.
    chat_id = new_chat()
    stack.memvault.stop()
    try:
        _, down = first_answers(bots, TS_BOT)
        told, _ = chat(bots, "The boat is moored at pier 4.", chat_id)
        assert told["reply"] == "Noted."
        asked, _ = chat(bots, "Where is the boat?", chat_id)
        assert asked["reply"].startswith("My memory is unreachable")
        queued = wait_for("both turns queued, memvault unread", lambda: (v := view(bots, chat_id))["degraded"] and v, 60)
        assert queued["queued"] == 2
        assert [m["content"] for m in queued["messages"]] == ["The boat is moored at pier 4.", "Noted.", "Where is the boat?",
                                                              asked["reply"]]
    finally:
        stack.memvault.timing = {}
        stack.memvault.start().wait_ready()
        STARTS["memvault, started again after the outage"] = stack.memvault.timing
    back = time.perf_counter()
    expected = ["The boat is moored at pier 4.", "Noted.", "Where is the boat?", asked["reply"]]
    # No message is sent: the agent's alarm retries the queue.
    wait_for("the queued turns in memvault", lambda: in_memvault(stack, chat_id) == expected, 180, every=0.5)
    flushed = time.perf_counter() - back
    assert wait_for("the queue empty", lambda: view(bots, chat_id)["queued"] == 0, 30)
    MEASURED.append(f"TypeScript bot with memvault stopped: a new chat's first answer {down * 1000:.0f} ms (median of 3); "
                    f"its 2 queued saves in memvault {flushed:.1f} s after memvault was ready again, in order, once each")

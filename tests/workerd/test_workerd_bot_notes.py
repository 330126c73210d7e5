"""The spec's Phase 1 check in real workerd: with the laptop off, the Telegram bot answers a fact
that lives only in a topic file. A family's notes are pushed with `brain_sync.py push` (a brain
writer credential from the key store), then questions go along the bot's real path — the webhook,
the chat's agent, memvault over the service binding, the memory router — to the fake model, whose
recorded request must hold each answer. `/remember` is readable at once over HTTP and the
portal's calls, and reaches the next answer. (MCP is not served by the Worker: docs/workerd.md.)"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from test_workerd_bot import deliver, update
from tier_fakes import HeldUpstream
from tier_stack import MainStack
from wrangler_dev import wait_for

from fake_telegram import FakeTelegram
from notes_questions import ABOUT_REMEMBERED, EXCLUDED, QUESTIONS, REMEMBERED, WALLED, Question, note_count, push_notes

CHAT_IDS = itertools.count(7_790_001)


def facts_for(stack: MainStack, question: Question) -> list[str]:
    """The facts a search with the bot's memory key recalls for the question."""
    found = stack.api("POST", "/v1/memory/search", stack.secrets.bot_key, json={"query": question.text})
    assert found.status_code == 200, found.text
    return [str(fact["text"]) for fact in found.json().get("facts", [])]


def readable(stack: MainStack, question: Question) -> None:
    """Waits until the notes holding the answer are found the way the router finds them (the
    Worker embeds a write after answering it)."""
    wait_for(f"the answer to {question.text!r} to be recalled",
             lambda: any(all(part in text for part in question.answer) for text in facts_for(stack, question)), 120)


# What the bot says when its model call failed (examples/telegram_bot/telegram_bot/agent.py).
APOLOGY = "Sorry, I cannot answer right now."
ATTEMPTS = 3


def asked(stack: MainStack, upstream: HeldUpstream, telegram: FakeTelegram, chat_id: int, text: str) -> dict[str, Any]:
    """Telegram delivers ``text``; the request the model got for it, once the reply went out. On a
    loaded machine the bot's model call through memvault has failed now and then (the bot then
    apologises): the question is asked again, a few times at most."""
    for _ in range(ATTEMPTS):
        before = len(telegram.to_chat(chat_id))
        assert deliver(stack, update(chat_id, text)).status_code == 200
        wait_for("the reply", lambda sent=before: len(telegram.to_chat(chat_id)) > sent, 90)
        if not telegram.to_chat(chat_id)[-1].startswith(APOLOGY):
            break
    found = [r for r in upstream.chat_requests() if r["messages"][-1]["content"] == text]
    assert found, f"no model request for {text!r}; the bot said {telegram.to_chat(chat_id)[-1]!r}"
    return dict(found[-1])


def system_of(request: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in request["messages"] if m["role"] == "system")


def test_the_bot_answers_from_notes_pushed_with_brain_sync(
    stack: MainStack, upstream: HeldUpstream, telegram: FakeTelegram, tmp_path: Path
) -> None:
    assert all(q.holds_no_answer() for q in (*QUESTIONS, WALLED, EXCLUDED, ABOUT_REMEMBERED))
    pushed = push_notes(stack.memvault.url, stack.secrets.notes_writer, tmp_path)
    assert json.loads(pushed.strip().splitlines()[-1]) == {"excluded": 1, "sent": note_count()}
    chat_id = next(CHAT_IDS)
    for question in QUESTIONS:
        readable(stack, question)
        request = asked(stack, upstream, telegram, chat_id, question.text)
        assert all(part in system_of(request) for part in question.answer), (question, system_of(request))
        assert not any(part in m["content"] for m in request["messages"] if m["role"] != "system"
                       for part in question.answer)
    # A business note (the bot's key is not granted the scope) and a note in private/ (never sent).
    for question in (WALLED, EXCLUDED):
        sent = json.dumps(asked(stack, upstream, telegram, next(CHAT_IDS), question.text))
        assert not any(part in sent for part in question.answer), question


def test_remember_is_readable_at_once_and_reaches_the_next_answer(
    stack: MainStack, upstream: HeldUpstream, telegram: FakeTelegram
) -> None:
    chat_id = next(CHAT_IDS)
    assert deliver(stack, update(chat_id, f"/remember {REMEMBERED}")).status_code == 200
    assert wait_for("the /remember reply", lambda: telegram.to_chat(chat_id), 90) == [f"Remembered: {REMEMBERED}"]
    source = f"telegram:{chat_id}"

    found = stack.api("POST", "/v1/brain/facts/search", stack.secrets.notes_writer, json={"query": "piano tuner"})
    assert found.status_code == 200, found.text
    assert [(f["source"], f["scope"]) for f in found.json()["results"] if f["content"] == REMEMBERED] == [(source, "family")]
    # The portal's calls, as its page makes them: who is signed in, then its recall view.
    me = stack.api("GET", "/portal/me", stack.secrets.family_writer, headers={"Accept": "application/json"})
    assert me.json()["kind"] == "brain"
    recalled = stack.api("POST", "/v1/brain/recall", stack.secrets.family_writer, json={"query": "piano tuner"},
                         headers={"Accept": "application/json"})
    assert recalled.status_code == 200 and source in recalled.text

    readable(stack, ABOUT_REMEMBERED)
    request = asked(stack, upstream, telegram, chat_id, ABOUT_REMEMBERED.text)
    assert all(part in system_of(request) for part in ABOUT_REMEMBERED.answer)

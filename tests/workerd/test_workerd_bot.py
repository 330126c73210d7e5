"""The example Telegram bot as its own Worker in real workerd, reaching memvault over its service
binding (RPC with the memory key its props name, and the memory router through the binding's
fetch), with a fake Telegram API and model on 127.0.0.1: the webhook answers Telegram before the
model has, the reply goes out, the turn lands in memvault, and an update delivered twice is
answered once."""

from __future__ import annotations

import itertools
import time
from typing import Any

import httpx
from tier_fakes import HeldUpstream
from tier_stack import WEBHOOK_SECRET, MainStack
from wrangler_dev import wait_for

from fake_telegram import FakeTelegram

UPDATE_IDS = itertools.count(880_000_001)
CHAT_IDS = itertools.count(7_770_001)


def update(chat_id: int, text: str) -> dict[str, Any]:
    return {"update_id": next(UPDATE_IDS), "message": {
        "message_id": 1, "date": int(time.time()), "text": text,
        "chat": {"id": chat_id, "type": "private"}, "from": {"id": chat_id, "is_bot": False, "first_name": "Ana"}}}


def deliver(stack: MainStack, body: Any, secret: str = WEBHOOK_SECRET) -> httpx.Response:
    """What Telegram does: post the update to the webhook, with the secret given to setWebhook."""
    return httpx.post(f"{stack.bot_url}/webhook", json=body, timeout=60,
                      headers={"X-Telegram-Bot-Api-Secret-Token": secret})


def chat_turns(stack: MainStack, chat_id: int) -> list[dict[str, Any]]:
    """The chat's session in memvault, oldest first, read with the bot's own memory key."""
    page = stack.api("GET", "/v1/memory", stack.secrets.bot_key, params={"session_id": f"telegram-{chat_id}", "limit": 50})
    assert page.status_code == 200, page.text
    return list(reversed(page.json()["items"]))


def test_an_update_is_answered_once_and_its_turn_lands_in_memvault(
    stack: MainStack, upstream: HeldUpstream, telegram: FakeTelegram
) -> None:
    chat_id = next(CHAT_IDS)
    first = update(chat_id, "My sister Clara plays the oboe on Thursdays.")
    upstream.hold()
    try:
        # Telegram hears back while the model has not answered yet: no retry for a slow model.
        assert deliver(stack, first).status_code == 200
        assert deliver(stack, first).status_code == 200  # Telegram's re-delivery of the same update
        wait_for("the bot to log the repeated delivery",
                 lambda: f"update {first['update_id']} was delivered before" in stack.bot.output(), 60)
        assert telegram.to_chat(chat_id) == []
    finally:
        upstream.release()
    wait_for("the reply to reach Telegram", lambda: telegram.to_chat(chat_id), 90)

    turns = wait_for("the turn in memvault", lambda: len(t := chat_turns(stack, chat_id)) >= 2 and t, 60)
    assert [(m["role"], m["content"]) for m in turns] == [("user", first["message"]["text"]), ("assistant", "Noted, thank you.")]
    assert turns[0]["metadata"] == {"chat_id": chat_id, "update_id": first["update_id"]}

    follow_up = update(chat_id, "Which instrument does Clara play?")
    assert deliver(stack, follow_up).status_code == 200
    wait_for("the second reply", lambda: len(telegram.to_chat(chat_id)) == 2, 90)
    asked = [r for r in upstream.chat_requests() if r["messages"][-1]["content"] in
             (first["message"]["text"], follow_up["message"]["text"])]
    assert len(asked) == 2, "the repeated update must not reach the model again"
    # The bot sent one turn of history; the router recalled the earlier one from memvault into the
    # system message.
    sent = asked[1]["messages"]
    assert not [m for m in sent if m["role"] != "system" and "oboe" in m["content"]]
    assert "oboe" in " ".join(m["content"] for m in sent if m["role"] == "system")


def test_remember_writes_a_brain_fact_over_rpc_and_reads_it_back(stack: MainStack, telegram: FakeTelegram) -> None:
    chat_id = next(CHAT_IDS)
    assert deliver(stack, update(chat_id, "/remember The vet is Dr. Osei on Mill Lane")).status_code == 200
    [reply] = wait_for("the /remember reply", lambda: telegram.to_chat(chat_id), 90)
    assert reply == "Remembered: The vet is Dr. Osei on Mill Lane"
    found = stack.api("GET", "/memory/search", stack.secrets.family_writer, params={"q": "Osei"}).json()["results"]
    assert [(r["scope"], r["source"]) for r in found] == [("family", f"telegram:{chat_id}")]


def test_the_webhook_refuses_a_wrong_secret_and_a_body_that_is_not_json(stack: MainStack, telegram: FakeTelegram) -> None:
    chat_id = next(CHAT_IDS)
    assert deliver(stack, update(chat_id, "hello"), secret="guessed").status_code == 401
    garbled = httpx.post(f"{stack.bot_url}/webhook", content=b"{not json", timeout=60,
                         headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET})
    assert garbled.status_code == 400
    assert httpx.get(f"{stack.bot_url}/webhook", timeout=60).status_code == 404
    # A real update afterwards is answered: nothing the refused ones did lingers.
    assert deliver(stack, update(chat_id, "hello again")).status_code == 200
    assert wait_for("the reply", lambda: telegram.to_chat(chat_id), 90) == ["Noted, thank you."]

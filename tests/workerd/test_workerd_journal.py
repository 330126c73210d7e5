"""The journal of routed calls on the real Worker, in D1: a routed call leaves no row once it is
settled (its turn stored, its usage counted). A row a killed isolate left behind is settled by the
next cron invocation (`test_workerd_scheduled.py` runs it: the tier's first cron run of the day)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
from test_workerd_admin import d1_rows
from tier_stack import MainStack
from wrangler_dev import wait_for


def usage_total(stack: MainStack) -> dict[str, Any]:
    """The key's usage since yesterday (UTC): a row ``leave_a_row`` makes an hour old is counted on
    yesterday's date in the first hour of a day."""
    since = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    answer = stack.api("GET", "/v1/usage", stack.secrets.memory_key, params={"from": since})
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["total"])


def session_texts(stack: MainStack, session_id: str) -> list[str]:
    listed = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": session_id})
    assert listed.status_code == 200, listed.text
    return [item["content"] for item in listed.json()["items"]]


def test_a_routed_call_settles_and_leaves_no_row(stack: MainStack) -> None:
    session_id = f"journal-{uuid.uuid4().hex[:8]}"
    before = usage_total(stack)["calls"]
    body = {"model": "gpt-tier", "messages": [{"role": "user", "content": "Remind me: the boiler service is in May."}]}
    answer = httpx.post(f"{stack.memvault.url}/v1/chat/completions", json=body, timeout=120,
                        headers={"X-Memory-Key": stack.secrets.memory_key, "X-Session-ID": session_id,
                                 "Authorization": "Bearer sk-tier-openai"})
    assert answer.status_code == 200, answer.text
    wait_for("the turn stored", lambda: "Remind me: the boiler service is in May." in session_texts(stack, session_id), 120)
    wait_for("the call counted", lambda: usage_total(stack)["calls"] > before, 120)
    receipt = answer.headers["x-memory-receipt"]
    wait_for("the journal row gone", lambda: not d1_rows(stack, f"SELECT id FROM routed_calls WHERE id = '{receipt}'"), 120)


@dataclass(frozen=True)
class Leftover:
    call_id: str
    session_id: str
    texts: tuple[str, str]


def leave_a_row(stack: MainStack) -> Leftover:
    """A journal row as an isolate killed right after its answer leaves one, an hour old."""
    left = Leftover(uuid.uuid4().hex, f"leftover-{uuid.uuid4().hex[:8]}",
                    ("Which locker did I rent at the pool?", "You rented locker 41 at the pool."))
    made = time.time() - 3600

    def message(role: str, text: str, part: str) -> str:
        return json.dumps({"role": role, "content": text, "timestamp": made, "id": f"rt-{left.call_id}-{part}",
                           "model": "gpt-tier", "metadata": None}).replace("'", "''")

    usage = json.dumps({"calls": 1, "input_tokens": 13, "output_tokens": 4, "memory_tokens": 6})
    stack.wrangler(["d1", "execute", "memvault-dev", "--local", "--command",
                    "INSERT INTO routed_calls (id, key_id, session_id, created_at, model, receipt_id, usage, answered, "
                    "forwarding_ms, provider_tokens, question, answer) VALUES "
                    f"('{left.call_id}', '{stack.secrets.memory_key_id}', '{left.session_id}', {made}, 'gpt-tier', "
                    f"NULL, '{usage}', 1, 5.0, '[13, 4]', '{message('user', left.texts[0], 'u')}', "
                    f"'{message('assistant', left.texts[1], 'a')}')"])
    return left


def check_settled(stack: MainStack, left: Leftover, before: dict[str, Any]) -> None:
    """What a cron invocation after ``leave_a_row`` must have done (``before``: the usage then)."""
    assert sorted(session_texts(stack, left.session_id)) == sorted(left.texts)
    after = usage_total(stack)
    assert (after["calls"] - before["calls"], after["input_tokens"] - before["input_tokens"]) == (1, 13)
    assert d1_rows(stack, f"SELECT id FROM routed_calls WHERE id = '{left.call_id}'") == []


def test_a_stores_usage_reaches_d1_with_its_mirror(stack: MainStack) -> None:
    """A store's counts ride its Durable Object's writes and reach D1 in the batch that mirrors them."""
    made = stack.api("POST", "/v1/admin/keys", stack.secrets.admin_token, json={"label": "store-usage"})
    assert made.status_code == 200, made.text
    key = made.json()["key"]
    turn = [{"role": "user", "content": "The gate code for the allotment is 4417."},
            {"role": "assistant", "content": "Noted: 4417 for the allotment gate."}]
    stored = stack.api("POST", "/v1/memory", key, json={"messages": turn})
    assert stored.status_code == 200, stored.text

    def counted() -> dict[str, Any] | None:
        total = dict(stack.api("GET", "/v1/usage", key).json()["total"])
        return total if total["messages_stored"] and total["embeddings"] >= 2 else None

    total = wait_for("the store counted", counted, 120)
    assert (total["messages_stored"], total["embeddings"], total["calls"]) == (2, 2, 0), total

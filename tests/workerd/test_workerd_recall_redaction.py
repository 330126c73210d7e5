"""The secret gate at recall, in real workerd: brain facts whose text holds secrets in local D1, as
a version from before today's rules stored them (written through the Worker, then given their old
text with `wrangler d1 execute`), come back redacted from keyword search, `/recall` and the memory
router's injection into a provider call."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import openai
from test_workerd_admin import d1_rows
from tier_fakes import HeldUpstream
from tier_stack import MainStack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from secret_corpus import SECRETS, leaks, sample

CASES = sample([case for case in SECRETS if case.split == "heldout"], per_family=1)[:24]


def sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def placeholder(n: int, marker: str) -> str:
    return f"Old note {n} {marker} placeholder."


def facts_as_stored_before_the_gate(stack: MainStack, marker: str) -> list[str]:
    """Facts in scope family whose D1 rows hold the corpus's secrets as said; their ids."""
    written = stack.api("POST", "/memory/write", stack.secrets.family_writer, json={
        "source": "notes:old-version", "scope": "family",
        "facts": [{"content": placeholder(n, marker)} for n in range(len(CASES))]})
    assert written.status_code == 200, written.text
    ids = list(written.json()["ids"])
    statements = [f"UPDATE memory SET content = {sql_text(f'Old note {marker}: {case.text}')} WHERE id = {sql_text(i)}"
                  for i, case in zip(ids, CASES, strict=True)]
    stack.wrangler(["d1", "execute", "memvault-dev", "--local", "--command", "; ".join(statements)])
    held = "\n".join(str(row["content"]) for row in d1_rows(stack, f"SELECT content FROM memory WHERE content LIKE '%{marker}%'"))
    assert len(leaks(CASES, held)) == len(CASES), "the rows should hold the secrets as an old version stored them"
    return ids


def redacted(text: str) -> bool:
    return "[redacted:" in text and leaks(CASES, text) == []


def test_search_recall_and_the_router_hand_back_no_secret_stored_before_the_gate(
    stack: MainStack, upstream: HeldUpstream
) -> None:
    marker = f"LEGACY{uuid.uuid4().hex[:8].upper()}"
    ids = facts_as_stored_before_the_gate(stack, marker)

    found = stack.api("GET", "/memory/search", stack.secrets.family_writer,
                      params={"q": marker, "mode": "keyword", "limit": len(ids)})
    assert found.status_code == 200, found.text
    results: list[dict[str, Any]] = found.json()["results"]
    assert {r["id"] for r in results} == set(ids)
    assert redacted(found.text)

    recalled = stack.api("GET", "/recall", stack.secrets.family_writer, params={"q": marker, "budget": 8000})
    assert recalled.status_code == 200, recalled.text
    assert marker in recalled.text and redacted(recalled.text)

    # The bot's memory key may read scope family: the router injects the facts, never their secrets.
    seen = len(upstream.upstream.received)
    client = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier-openai", max_retries=0,
                           default_headers={"X-Memory-Key": stack.secrets.bot_key, "X-Memory-Store": "false"})
    # Asked in the words the facts were written with, so their vectors (of that text) are close to it.
    client.chat.completions.create(model="gpt-tier", messages=[{"role": "user", "content": placeholder(0, marker)}])
    [request] = upstream.upstream.received[seen:]
    system = " ".join(m["content"] for m in request.json["messages"] if m["role"] == "system")
    assert marker in system and redacted(system)

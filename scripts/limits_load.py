#!/usr/bin/env python3
"""Per-key limits under a long crowd on loopback: a real `memvault serve` in front of the fake
provider (the one the provider tests use), many memory keys each limited to a few requests a
minute through the admin surface, a few keys without limits, and one key limited in provider
tokens per day. For `--seconds`, `--clients` concurrent clients call the memory router (OpenAI
chat, memory recalled and the turn stored) and `POST /v1/memory/search` across all of them.

What it prints, each figure beside its target:
- per limited key, the 200s admitted in each UTC minute against the limit (never over it);
- every 429 with `Retry-After` in range and the caller's envelope (the provider's for the
  router, memvault's for the search);
- the keys without limits: every call answered 200; the limited keys: each reached its limit in
  every whole minute of the run, whatever the others did;
- the token key: refused once its day's provider tokens reached the limit, never admitted again;
- every key's messages afterwards: the user turns stored are exactly those of its admitted
  router calls (a refused call stores nothing; the fake's reply is the same text every time, so
  the assistant turns are not counted).

A 200 is counted in a minute only when its request both started and ended in that minute (the
server admits it somewhere in between); answers spanning a minute's turn are shown apart (`span`),
and a whole minute falls short of the limit only if it stays short with them added.
The hash embedder is the default: this measures the limit gate, not recall, and the gate runs
before the embedder is reached for a refused call. The last line is one JSON object.

    nice -n 19 .venv/bin/python scripts/limits_load.py                    # 120 s, 50 keys
    .venv/bin/python scripts/limits_load.py --seconds 30 --keys 10 --clients 16
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import secrets
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_common import local_memvault, print_figures  # noqa: E402
from bench_router import fake_upstream  # noqa: E402

MINUTE = 60
ROUTER, SEARCH = "router", "search"


@dataclass
class Answer:
    surface: str
    text: str
    status: int
    started: float
    ended: float
    retry_after: str | None
    body: dict[str, Any]


@dataclass
class Key:
    name: str
    id: str
    secret: str
    requests_per_minute: int | None = None
    provider_tokens_per_day: int | None = None
    answers: list[Answer] = field(default_factory=list)

    def admitted(self, surface: str | None = None) -> list[Answer]:
        return [a for a in self.answers if a.status == 200 and surface in (None, a.surface)]


class Crowd:
    def __init__(self, url: str, admin: str, keys: list[Key]) -> None:
        self.url, self.admin, self.keys = url, {"Authorization": f"Bearer {admin}"}, keys
        self.failures: Counter[str] = Counter()
        self.sent = 0

    async def call(self, client: httpx.AsyncClient, key: Key, surface: str) -> None:
        self.sent += 1
        text = f"call {self.sent} of {key.name}: where did I leave the blue umbrella?"
        started = time.time()
        try:
            if surface == ROUTER:
                response = await client.post(
                    f"{self.url}/v1/chat/completions",
                    json={"model": "gpt-load", "messages": [{"role": "user", "content": text}]},
                    headers={"X-Memory-Key": key.secret, "Authorization": "Bearer sk-load"},
                )
            else:
                response = await client.post(f"{self.url}/v1/memory/search", json={"query": text},
                                             headers={"Authorization": f"Bearer {key.secret}"})
        except httpx.HTTPError as exc:
            self.failures[type(exc).__name__] += 1
            return
        body = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
        key.answers.append(Answer(surface, text, response.status_code, started, time.time(),
                                  response.headers.get("retry-after"), body if response.status_code != 200 else {}))

    async def hammer(self, seconds: float, clients: int) -> None:
        deadline = time.monotonic() + seconds
        pool = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(timeout=60, limits=pool, trust_env=False) as client:
            async def one_client(seed: int) -> None:
                pick = random.Random(seed)
                while time.monotonic() < deadline:
                    await self.call(client, pick.choice(self.keys), pick.choice((ROUTER, SEARCH)))

            await asyncio.gather(*(one_client(n) for n in range(clients)))


def make_keys(url: str, admin: dict[str, str], limited: int, free: int, rpm: int, token_limit: int) -> list[Key]:
    keys = []
    with httpx.Client(timeout=60, trust_env=False) as client:
        for name, limits in ([(f"limited-{n:02d}", {"requests_per_minute": rpm}) for n in range(limited)]
                             + [(f"free-{n}", {}) for n in range(free)]
                             + [("tokens", {"provider_tokens_per_day": token_limit})]):
            made = client.post(f"{url}/v1/admin/keys", json={"label": name}, headers=admin)
            made.raise_for_status()
            key = Key(name, made.json()["id"], made.json()["key"], limits.get("requests_per_minute"),
                      limits.get("provider_tokens_per_day"))
            if limits:
                set_to = client.put(f"{url}/v1/admin/keys/{key.id}/limits", json=limits, headers=admin)
                set_to.raise_for_status()
            keys.append(key)
    return keys


def refusal_ok(answer: Answer, most_wait: int) -> bool:
    """Retry-After a whole number of seconds in range, and the refusal in the caller's envelope."""
    wait = answer.retry_after
    if wait is None or not wait.isdigit() or not 1 <= int(wait) <= most_wait:
        return False
    error = answer.body.get("error") or {}
    return error.get("type") == "rate_limit_error" if answer.surface == ROUTER else error.get("code") == "rate_limited"


def minutes(key: Key) -> tuple[dict[int, int], int]:
    """200s per UTC minute (start and end inside it), and the 200s spanning a minute's turn."""
    within: dict[int, int] = defaultdict(int)
    spanning = 0
    for answer in key.admitted():
        first, last = int(answer.started // MINUTE), int(answer.ended // MINUTE)
        if first == last:
            within[first] += 1
        else:
            spanning += 1
    return within, spanning


def stored_user_turns(client: httpx.Client, url: str, key: Key) -> set[str]:
    found: set[str] = set()
    offset = 0
    while True:
        page = client.get(f"{url}/v1/memory", params={"limit": 500, "offset": offset},
                          headers={"Authorization": f"Bearer {key.secret}"})
        page.raise_for_status()
        items = page.json()["items"]
        found.update(item["content"] for item in items if item["role"] == "user")
        offset += len(items)
        if len(items) < 500:
            return found


def settle_stores(url: str, admin: dict[str, str], keys: list[Key], wait_seconds: float) -> dict[str, set[str]]:
    """Each key's stored user turns once those of its admitted calls are in (turns are stored after
    the answer), read with its limits lifted (reading counts against them)."""
    with httpx.Client(timeout=60, trust_env=False) as client:
        for key in keys:
            client.put(f"{url}/v1/admin/keys/{key.id}/limits", json={}, headers=admin).raise_for_status()
        stored: dict[str, set[str]] = {}
        deadline = time.monotonic() + wait_seconds
        for key in keys:
            expected = {answer.text for answer in key.admitted(ROUTER)}
            while not expected <= (turns := stored_user_turns(client, url, key)) and time.monotonic() < deadline:
                time.sleep(0.5)
            stored[key.name] = turns
        return stored


def usage_by_key(url: str, admin: dict[str, str]) -> dict[str, dict[str, Any]]:
    with httpx.Client(timeout=60, trust_env=False) as client:
        found = client.get(f"{url}/v1/admin/usage", params={"group_by": "key"}, headers=admin)
        found.raise_for_status()
        return {row["key_id"]: row for row in found.json()["rows"]}


def report(keys: list[Key], stored: dict[str, set[str]], usage: dict[str, dict[str, Any]], run: tuple[float, float],
           failures: Counter[str], clients: int) -> dict[str, Any]:
    first_minute, last_minute = math.ceil(run[0] / MINUTE), int(run[1] // MINUTE) - 1  # whole minutes of the run
    whole = list(range(first_minute, last_minute + 1))
    limited = [k for k in keys if k.requests_per_minute is not None]
    free = [k for k in keys if k.requests_per_minute is None and k.provider_tokens_per_day is None]
    (tokens,) = [k for k in keys if k.provider_tokens_per_day is not None]
    over, short, bad_refusals, spanning_all, unstored = 0, 0, 0, 0, 0
    print(f"{'key':<12} {'limit':>5}  200s per minute (whole minutes marked *)   span   429s  bad 429s  turns stored/admitted")
    for key in [*limited, *free, tokens]:
        within, spanning = minutes(key)
        spanning_all += spanning
        refused = [a for a in key.answers if a.status == 429]
        wrong = sum(not refusal_ok(a, MINUTE if key.requests_per_minute else 86_400) for a in refused)
        bad_refusals += wrong
        expected = {answer.text for answer in key.admitted(ROUTER)}
        unstored += stored[key.name] != expected
        if key.requests_per_minute is not None:
            over += sum(count > key.requests_per_minute for count in within.values())
            short += sum(within.get(m, 0) + spanning < key.requests_per_minute for m in whole)
        cells = " ".join(f"{within.get(m, 0)}{'*' if m in whole else ''}" for m in sorted({*within, *whole}))
        limit = key.requests_per_minute or "-"
        print(f"{key.name:<12} {limit:>5}  {cells:<42} {spanning:>5} {len(refused):>6} {wrong:>9}  "
              f"{len(stored[key.name])}/{len(expected)}{'' if stored[key.name] == expected else ' MISMATCH'}")
    free_refused = sum(a.status != 200 for k in free for a in k.answers)
    other_status = Counter(a.status for k in keys for a in k.answers if a.status not in (200, 429))
    token_refusals = [a for a in tokens.answers if a.status == 429]
    first_refusal = min((a.ended for a in token_refusals), default=math.inf)
    admitted_after = sum(a.started > first_refusal for a in tokens.admitted())
    spent = usage.get(tokens.id, {})
    spent_tokens = int(spent.get("input_tokens", 0)) + int(spent.get("output_tokens", 0))
    per_call = spent_tokens / max(1, len(tokens.admitted(ROUTER)))
    past = math.ceil((spent_tokens - (tokens.provider_tokens_per_day or 0)) / per_call) if spent_tokens else 0
    calls = sum(len(k.answers) for k in keys)
    figures = {
        "calls": calls, "calls_per_second": round(calls / (run[1] - run[0]), 1), "keys_limited": len(limited),
        "minute_windows_over_limit": over, "whole_minutes_short_of_limit": short, "answers_spanning_a_minute": spanning_all,
        "refusals_bad_retry_after_or_envelope": bad_refusals, "refusals": sum(a.status == 429 for k in keys for a in k.answers),
        "free_keys_refused": free_refused, "other_statuses": dict(other_status), "transport_failures": dict(failures),
        "token_limit": tokens.provider_tokens_per_day, "token_key_tokens_spent": spent_tokens,
        "token_key_admitted": len(tokens.admitted()), "token_key_refused": len(token_refusals),
        "token_key_admitted_after_first_refusal": admitted_after, "token_key_calls_past_limit": past,
        "token_refusals_naming_tokens": sum("provider tokens" in str((a.body.get("error") or {}).get("message"))
                                            for a in token_refusals),
        "keys_with_stored_mismatch": unstored, "whole_minutes": len(whole),
    }
    print()
    for label, value, target in (
        ("minute windows over a key's limit", over, "0"),
        ("whole minutes a limited key fell short of its limit", short, "0"),
        ("429s without Retry-After in range or outside the caller's envelope", bad_refusals, "0"),
        ("calls of keys without limits not answered 200", free_refused, "0"),
        ("answers neither 200 nor 429", sum(other_status.values()) + sum(failures.values()), "0"),
        ("token key: 200s after its first refusal", admitted_after, "0"),
        ("token key: refusals naming provider tokens", f"{figures['token_refusals_naming_tokens']}/{len(token_refusals)}",
         "all, at least 1"),
        ("token key: provider tokens spent / limit", f"{spent_tokens}/{tokens.provider_tokens_per_day}",
         "at or past the limit"),
        ("token key: calls admitted past the limit (in flight as it was reached)", past, f"at most {clients}"),
        ("keys whose stored turns differ from their admitted router calls", unstored, "0"),
    ):
        print(f"{label:<68} {value!s:>12}   target {target}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the crowd calls (default 120)")
    parser.add_argument("--keys", type=int, default=50, help="keys limited in requests a minute (default 50)")
    parser.add_argument("--free-keys", type=int, default=5, help="keys without limits beside them (default 5)")
    parser.add_argument("--limit", type=int, default=5, help="requests a minute of each limited key (default 5)")
    parser.add_argument("--token-limit", type=int, default=200, help="the token key's provider tokens a day")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--embedder", default="hash", help="the server's embedder (default hash)")
    args = parser.parse_args()
    admin = secrets.token_urlsafe(32)
    with fake_upstream() as upstream, local_memvault(args.embedder, MEMVAULT_ADMIN_TOKEN=admin,
                                                    MEMVAULT_OPENAI_BASE_URL=upstream) as server:
        headers = {"Authorization": f"Bearer {admin}"}
        keys = make_keys(server.url, headers, args.keys, args.free_keys, args.limit, args.token_limit)
        crowd = Crowd(server.url, admin, keys)
        print(f"{len(keys)} keys, {args.clients} clients, {args.seconds:.0f} s", flush=True)
        started = time.time()
        asyncio.run(crowd.hammer(args.seconds, args.clients))
        run = (started, time.time())
        stored = settle_stores(server.url, headers, keys, wait_seconds=120.0)
        figures = report(keys, stored, usage_by_key(server.url, headers), run, crowd.failures, args.clients)
    print_figures({"seconds": args.seconds, "clients": args.clients, "limit": args.limit, **figures})


if __name__ == "__main__":
    main()

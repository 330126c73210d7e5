"""The scope walls, property-tested: facts land in random scopes, a writer of every scope links
some of them across scopes (supersedes, or moves a source by reconcile), and every credential reads
them through every read path (HTTP and the core functions the RPC methods call): no row, no link,
no error message and no score ever tells it anything from outside its scopes. Referer and friends
never identify anyone."""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from brain_env import ALL_SCOPES, CREDENTIALS, Brain, brain_fixture, close_brain, open_brain  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.core import brain as core
from memvault.core.brain.scopes import auth_of
from memvault.core.errors import NotFound

WORDS = ["invoice", "20028", "NVDA", "Okonkwo", "garden", "passport", "roof", "ledger", "piano", "tax"]

ID = re.compile(r"mem-[0-9a-f]{16}")
WRITERS = sorted(name for name, (_, writer) in CREDENTIALS.items() if writer)
# What follows a fact, if anything: a version that supersedes it, or its source moved by
# reconcile; either may land in another scope, which links the old row across the wall.
successor_strategy = st.one_of(st.none(), st.tuples(st.sampled_from(["supersede", "move"]), st.sampled_from(ALL_SCOPES)))
fact_strategy = st.tuples(
    st.sampled_from(ALL_SCOPES),
    st.sampled_from(WORDS),
    st.sampled_from(WORDS),
    st.booleans(),  # pinned
    st.booleans(),  # long enough to go to the blob store
    successor_strategy,
)
Fact = tuple[str, str, str, bool, bool, tuple[str, str] | None]

# Longer attack runs: WALL_EXAMPLES=400 .venv/bin/python -m pytest tests/api/brain/test_walls.py
WALL_EXAMPLES = int(os.environ.get("WALL_EXAMPLES", "20"))


@dataclass(frozen=True)
class Written:
    scope: str
    source: str
    content: str


def _scopes_of(payload: Any) -> list[str]:
    """Every scope mentioned by any fact-shaped object in a response."""
    found: list[str] = []
    if isinstance(payload, dict):
        if "scope" in payload and "id" in payload:
            found.append(payload["scope"])
        for value in payload.values():
            found += _scopes_of(value)
    elif isinstance(payload, list):
        for value in payload:
            found += _scopes_of(value)
    return found


def _ids_in(payload: Any) -> set[str]:
    """Every fact id anywhere in a response: rows, links, chains, retirements, messages."""
    return set(ID.findall(json.dumps(payload)))


async def _populate(brain: Brain, facts: list[Fact]) -> dict[str, Written]:
    written: dict[str, Written] = {}

    async def write(payload: dict[str, Any]) -> str:
        item = payload["facts"][0] if "facts" in payload else payload
        new_id: str = (await brain.write(payload))["ids"][0]
        written[new_id] = Written(payload["scope"], payload["source"], item["content"])
        return new_id

    for n, (scope, w1, w2, pinned, long, successor) in enumerate(facts):
        text = f"{w1} {w2} note {n}" + (" filler" * 200 if long else "")
        first = await write({"content": text, "scope": scope, "source": f"src:{n}", "pinned": pinned})
        brain.clock.advance(5)
        if successor is not None and successor[0] == "supersede":
            await write({"content": f"{w2} {w1} revised {n}", "scope": successor[1], "source": f"src:{n}",
                         "supersedes": first})
        elif successor is not None:
            await write({"source": f"src:{n}", "scope": successor[1], "reconcile": True,
                         "facts": [{"content": f"{w2} {w1} moved {n}"}]})
        brain.clock.advance(5)
    return written


async def _every_read(brain: Brain, reader: str, query: str, as_of: float) -> list[Any]:
    """Every read path over HTTP and through the core (RPC) functions, each response."""
    http = [
        (await brain.get("/memory/search", reader, q=query, mode=mode, as_of=when)).json()
        for mode in ("keyword", "hybrid") for when in (None, as_of)
    ]
    http.append((await brain.get("/recall", reader, q=query)).json())
    http.append((await brain.get("/recall", reader, q=query, as_of=as_of, budget=500)).json())
    http.append((await brain.get("/memory/skill", reader)).json())
    export = await brain.get("/memory/export", reader)
    http.append([json.loads(line) for line in export.text.splitlines()])
    credential = await auth_of(f"tok-{reader}", brain.deps)
    calls = [
        (core.SEARCH_FACTS, {"query": query, "mode": "hybrid", "limit": 50}),
        (core.SEARCH_FACTS, {"query": query, "as_of": as_of, "limit": 50}),
        (core.RECALL, {"query": query}),
        (core.EXPORT_FACTS, {}),
        (core.SYNC, {"direction": "pull", "source": "src:"}),
    ]
    rpc = [core.to_plain(await op.perform(brain.deps, credential, data)) for op, data in calls]
    return [*http, *rpc]


@settings(max_examples=WALL_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(facts=st.lists(fact_strategy, min_size=1, max_size=6), query=st.sampled_from(WORDS))
def test_no_read_path_returns_a_row_or_a_link_outside_the_credentials_scopes(facts: list[Fact], query: str) -> None:
    async def scenario(data_dir: Path) -> None:
        brain = await open_brain(data_dir)
        try:
            written = await _populate(brain, facts)
            as_of = brain.clock.now - 7
            for reader, (scopes, _) in sorted(CREDENTIALS.items()):
                allowed = set(scopes)
                readable = {fact_id for fact_id, fact in written.items() if fact.scope in allowed}
                for response in await _every_read(brain, reader, query, as_of):
                    assert set(_scopes_of(response)) <= allowed, response
                    assert _ids_in(response) <= readable, (reader, response)
                credential = await auth_of(f"tok-{reader}", brain.deps)
                for fact_id, fact in written.items():
                    body = await brain.get("/memory/body", reader, id=fact_id)
                    chain = await brain.get("/memory/history", reader, id=fact_id)
                    assert body.status_code == chain.status_code == (200 if fact.scope in allowed else 404)
                    assert _ids_in(chain.json()) <= readable | {fact_id}, (reader, chain.json())
                    if chain.status_code == 200:
                        assert set(_scopes_of(chain.json())) <= allowed
                    if fact.scope not in allowed:
                        with pytest.raises(NotFound):
                            await core.FACT_BODY.perform(brain.deps, credential, {"id": fact_id})
                        with pytest.raises(NotFound):
                            await core.FACT_HISTORY.perform(brain.deps, credential, {"id": fact_id})
                # The wall is not over-tight either: export holds exactly the readable rows, and
                # a link shows whenever its other end is readable.
                exported = core.to_plain(await core.EXPORT_FACTS.perform(brain.deps, credential, {}))["facts"]
                assert sorted(r["id"] for r in exported) == sorted(readable)
                stored = {r["id"]: r["superseded_by"] for r in await brain.deps.db.query("SELECT id, superseded_by FROM memory")}
                for row in exported:
                    assert row["superseded_by"] == (stored[row["id"]] if stored[row["id"]] in readable else None)
            for name in WRITERS:
                await _errors_name_nothing_behind_the_wall(brain, name, written)
        finally:
            await close_brain(brain)

    with tempfile.TemporaryDirectory() as data_dir:
        asyncio.run(scenario(Path(data_dir)))


async def _errors_name_nothing_behind_the_wall(brain: Brain, writer: str, written: dict[str, Written]) -> None:
    """A writer that supersedes an already superseded fact is refused by a message naming only
    what it sent or may read; one that sends the source and text of a fact it cannot read stores
    its own fact, and its answer names nothing of the other."""
    allowed = set(CREDENTIALS[writer][0])
    readable = {fact_id for fact_id, fact in written.items() if fact.scope in allowed}
    retired = {r["id"] for r in await brain.deps.db.query("SELECT id FROM memory WHERE superseded_at IS NOT NULL")}
    for fact_id, fact in sorted(written.items()):
        if fact.scope not in allowed:
            copy = {"content": fact.content, "source": fact.source, "scope": sorted(allowed)[0]}
            response = await brain.client.post("/memory/write", json=copy, headers=brain.headers(writer))
            assert response.status_code == 200, (writer, copy, response.text)
            assert not _ids_in(response.json()) & set(written), (writer, response.json())
            assert set(_scopes_of(response.json())) <= allowed, (writer, response.json())
        elif fact_id in retired:
            rows = await brain.count()
            rival = {"content": f"rival of {fact_id}", "scope": fact.scope, "source": "rival", "supersedes": fact_id}
            response = await brain.client.post("/memory/write", json=rival, headers=brain.headers(writer))
            assert response.status_code == 409, (writer, rival, response.text)
            message = response.json()["error"]["message"]
            assert ID.findall(message) and set(ID.findall(message)) <= readable | {fact_id}, (writer, message)
            assert not {scope for scope in ALL_SCOPES if scope in message} - allowed, (writer, message)
            assert await brain.count() == rows


# Readers that some scope is hidden from, and what they search for.
WALLED_READERS = sorted(name for name, (scopes, _) in CREDENTIALS.items() if set(scopes) != set(ALL_SCOPES))
text_strategy = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=WALL_EXAMPLES + 5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reader=st.sampled_from(WALLED_READERS), visible_texts=st.lists(text_strategy, min_size=1, max_size=8),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
       walled=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4), text_strategy), min_size=1, max_size=8))
def test_scores_are_the_same_whatever_lies_behind_the_wall(
    reader: str, visible_texts: list[str], query: str, walled: list[tuple[int, int, str]]
) -> None:
    """The precise no-leak property: rows added behind the wall, holding the query's very terms
    (repeated, and beside other words), change neither the reader's scores nor its order."""
    allowed = CREDENTIALS[reader][0]
    hidden = [scope for scope in ALL_SCOPES if scope not in allowed]

    async def answers(brain: Brain, as_of: float) -> list[Any]:
        credential = await brain.credential(reader)
        calls = [
            (core.SEARCH_FACTS, {"query": query, "mode": mode, "as_of": when, "entry_type": kind, "limit": 50})
            for mode in ("keyword", "hybrid") for when in (None, as_of) for kind in (None, "fact")
        ] + [(core.RECALL, {"query": query}), (core.RECALL, {"query": query, "as_of": as_of, "budget": 800})]
        return [core.to_plain(await op.perform(brain.deps, credential, data)) for op, data in calls]

    async def scenario(data_dir: Path) -> None:
        brain = await open_brain(data_dir)
        try:
            for n, text in enumerate(visible_texts):
                await brain.write({"content": text, "scope": allowed[n % len(allowed)], "source": f"v:{n}"})
                brain.clock.advance(3)
            as_of = brain.clock.now - 2
            before = await answers(brain, as_of)
            assert before[0]["results"] or not set(query.split()) & set(" ".join(visible_texts).split())
            for n, (where, repeat, text) in enumerate(walled):
                content = " ".join([query] * repeat + [text])
                await brain.write({"content": content, "scope": hidden[where % len(hidden)], "source": f"w:{n}"})
            assert await answers(brain, as_of) == before
        finally:
            await close_brain(brain)

    with tempfile.TemporaryDirectory() as data_dir:
        asyncio.run(scenario(Path(data_dir)))


READ_ROUTES = [
    ("GET", "/memory/search?q=invoice"),
    ("GET", "/memory/search?q=invoice&mode=hybrid"),
    ("GET", "/recall?q=invoice"),
    ("GET", "/memory/body?id=mem-0000000000000000"),
    ("GET", "/memory/history?id=mem-0000000000000000"),
    ("GET", "/memory/export"),
    ("GET", "/memory/skill"),
    ("POST", "/memory/sync"),
    ("POST", "/memory/write"),
    ("POST", "/memory/skill"),
]
FORGED = [
    {"Referer": "https://brain.example.com/dashboard"},
    {"Referer": "https://brain.example.com/", "Origin": "https://brain.example.com"},
    {"Referer": "https://brain.example.com/", "Authorization": "Bearer not-a-real-token"},
    {"Referer": "https://brain.example.com/", "Authorization": "Basic dG9rLXdyaXRlcjo="},
    {"Referer": "https://brain.example.com/", "Cookie": "token=tok-writer"},
]


@pytest.mark.parametrize("headers", FORGED, ids=range(len(FORGED)))
@pytest.mark.parametrize(("method", "path"), READ_ROUTES)
async def test_a_forged_referer_gets_nothing(brain: Brain, method: str, path: str, headers: dict[str, str]) -> None:
    await brain.write({"content": "invoice 20028 secret plans", "scope": "business"})
    body = {"direction": "pull", "source": "api"} if path == "/memory/sync" else {"content": "x", "scope": "business"}
    if path == "/memory/skill" and method == "POST":
        body = {"slug": "s", "content": "x", "scope": "business"}
    response = await brain.client.request(method, path, headers=headers, json=body if method == "POST" else None)
    assert response.status_code == 401
    assert "invoice" not in response.text
    assert await brain.count() == 1


async def test_the_token_in_a_query_string_is_ignored(brain: Brain) -> None:
    response = await brain.client.get("/memory/export?token=tok-reader-all&authorization=Bearer%20tok-reader-all")
    assert response.status_code == 401


async def test_the_dedicated_token_header_works_for_rpc_style_callers(brain: Brain) -> None:
    await brain.write({"content": "ledger balanced", "scope": "business"})
    response = await brain.client.get("/memory/search", params={"q": "ledger"},
                                      headers={"X-Memvault-Brain-Token": "tok-business"})
    assert response.status_code == 200 and len(response.json()["results"]) == 1


class RecordingDatabase:
    """Delegates to the real database and remembers every statement it was given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: list[str] = []

    async def query(self, sql: str, params: Any = ()) -> Any:
        self.seen.append(sql)
        return await self.inner.query(sql, params)

    async def execute(self, sql: str, params: Any = ()) -> Any:
        self.seen.append(sql)
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Any) -> Any:
        self.seen.extend(sql for sql, _ in statements)
        return await self.inner.batch(statements)


async def test_every_read_statement_carries_the_scope_clause(brain: Brain) -> None:
    first = (await brain.write({"content": "invoice 20028 roof", "scope": "business", "source": "files:a.md",
                                "pinned": True}))["ids"][0]
    await brain.write({"content": "invoice 20028 roof, revised", "scope": "business", "source": "files:a.md",
                       "supersedes": first})
    await brain.client.post("/memory/skill", headers=brain.headers("writer"),
                            json={"slug": "s", "content": "invoice steps", "scope": "business"})
    recorder = RecordingDatabase(brain.deps.db)
    brain.deps.db = recorder  # type: ignore[assignment]
    await _every_read(brain, "shared+business", "invoice", brain.clock.now)
    for path in ("/memory/body", "/memory/history"):
        assert (await brain.get(path, "shared+business", id=first)).status_code == 200
    await brain.get("/memory/skill", "shared+business", slug="s")
    reads = [sql for sql in recorder.seen if sql.lstrip().upper().startswith(("SELECT", "WITH"))]
    # The read cache's generation counters hold numbers, no rows: they are named by the reader's
    # own scopes and need no wall of their own.
    reads = [sql for sql in reads if "FROM cache_generations" not in sql]
    assert len(reads) >= 15
    for sql in reads:
        assert "scope IN (" in sql, sql

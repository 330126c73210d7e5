"""One contract per operation, whatever the surface: HTTP, both RPC families, MCP, the CLI, and the
client over HTTP and over RPC answer an operation in the one shape the API documents (checked
against the served OpenAPI document's schema), and refuse the same bad input with the same error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from memory_support import Memvault

from memvault import cli
from memvault.adapters.local.http_client import HttpxClient
from memvault.api.app import create_app
from memvault.api.mcp.tools import mcp_server
from memvault.client import HttpTransport, MemoryClient, RpcTransport
from memvault.core.credentials.callers import CallerTokens
from memvault.core.errors import MemvaultError
from memvault.runtime import rpc

QUERY = "where is the harbour lamp"
RESULTS = {"store": "StoreReceipt", "read": "MemoryPage", "search": "SearchResult", "forget": "ForgetReceipt",
           "stats": "MemoryStats"}


@dataclass(frozen=True)
class Outcome:
    result: dict[str, Any] | None = None
    message: str | None = None  # the refusal's message
    code: str | None = None
    status: int | None = None


def clone(value: Any) -> Any:
    """What crosses a service binding: structured-cloneable data, here JSON."""
    return json.loads(json.dumps(value))


def camel(options: dict[str, Any]) -> dict[str, Any]:
    names = {"session_id": "sessionId", "budget_tokens": "budgetTokens"}
    return {names.get(name, name): value for name, value in options.items() if value is not None}


async def refused_or(call: Awaitable[Any]) -> Outcome:
    try:
        return Outcome(result=clone(await call))
    except MemvaultError as exc:
        return Outcome(message=exc.message, code=exc.code, status=exc.status)


class Surfaces:
    """Each surface as a caller uses it, fed the operation's plain data and translating it into its
    own carriers (headers, query, positional arguments, options objects, tool arguments, argv)."""

    def __init__(self, memvault: Memvault, mcp: Client, capsys: pytest.CaptureFixture[str]) -> None:
        self.mv, self.mcp, self.capsys = memvault, mcp, capsys
        self.props = {rpc.MEMORY_KEY_PROP: memvault.key_id}
        http = HttpTransport(HttpxClient(memvault.client), "http://memvault.test", memvault.key)
        self.clients = {"client-http": MemoryClient(http), "client-rpc": MemoryClient(RpcTransport(self))}

    async def call(self, method: str, *args: Any) -> Any:
        """The client's service binding, in process: the runtime function the entry hands each method to."""
        methods = {"getMemory": rpc.get_bound_memory, "saveMemory": rpc.save_bound_memory,
                   "searchMemory": rpc.search_bound_memory}
        return clone(await methods[method](self.mv.deps, self.props, *clone(list(args))))

    def supporting(self, operation: str) -> dict[str, Callable[[dict[str, Any]], Awaitable[Outcome]]]:
        every = {
            "store": {"http": self.http_store, "rpc": self.rpc_store, "rpc-key": self.rpc_key_store,
                      "mcp": self.mcp_tool("memory_store"), **self.client_calls("store")},
            "read": {"http": self.http_read, "rpc": self.rpc_read, "rpc-key": self.rpc_key_read,
                     **self.client_calls("read")},
            "search": {"http": self.http_json("POST", "/v1/memory/search"), "rpc": self.rpc_search,
                       "rpc-key": self.rpc_key_search, "mcp": self.mcp_tool("memory_search"), "cli": self.cli_search,
                       **self.client_calls("search")},
            "forget": {"http": self.http_forget, "http-body": self.http_json("POST", "/v1/memory/forget"), "rpc": self.rpc_forget, "rpc-key": self.rpc_key_forget,
                       "mcp": self.mcp_tool("memory_forget"), "cli": self.cli_forget},
            "stats": {"http": self.http_json("GET", "/v1/memory/stats"), "cli": self.cli_stats},
        }
        return every[operation]

    async def http(self, method: str, path: str, **request: Any) -> Outcome:
        if "json" in request:  # as JavaScript's JSON.stringify writes it: a lone surrogate escaped
            request["content"] = json.dumps(request.pop("json")).encode()
            request["headers"] = {**request.get("headers", {}), "content-type": "application/json"}
        answer = await self.mv.client.request(method, path, **request)
        body = answer.json()
        if answer.status_code == 200:
            return Outcome(result=body)
        return Outcome(message=body["error"]["message"], code=body["error"]["code"], status=answer.status_code)

    def http_json(self, method: str, path: str) -> Callable[[dict[str, Any]], Awaitable[Outcome]]:
        async def send(data: dict[str, Any]) -> Outcome:
            return await self.http(method, path, headers=self.mv.auth, **({"json": data} if method == "POST" else {}))

        return send

    async def http_store(self, data: dict[str, Any]) -> Outcome:
        session = {"X-Session-ID": data["session_id"]} if data.get("session_id") else {}
        body = {"messages": data["messages"], "metadata": data.get("metadata")}
        return await self.http("POST", "/v1/memory", json=body, headers={**self.mv.auth, **session})

    async def http_read(self, data: dict[str, Any]) -> Outcome:
        query = {name: value for name, value in data.items() if value is not None}
        return await self.http("GET", "/v1/memory", params=query, headers=self.mv.auth)

    async def http_forget(self, data: dict[str, Any]) -> Outcome:
        (message_id,) = data["ids"]
        query = {"session_id": data["session_id"]} if data.get("session_id") else {}
        # The id percent-encoded as one path segment, `/` included.
        return await self.http("DELETE", f"/v1/memory/{quote(message_id, safe='')}", params=query, headers=self.mv.auth)

    async def rpc_store(self, data: dict[str, Any]) -> Outcome:
        args = clone([data.get("session_id"), data["messages"], data.get("metadata")])
        return await refused_or(rpc.save_bound_memory(self.mv.deps, self.props, *args))

    async def rpc_key_store(self, data: dict[str, Any]) -> Outcome:
        args = clone([data.get("session_id"), data["messages"], data.get("metadata")])
        return await refused_or(rpc.save_memory(self.mv.deps, self.mv.key, *args))

    async def rpc_read(self, data: dict[str, Any]) -> Outcome:
        options = clone(camel({k: v for k, v in data.items() if k != "session_id"}))
        return await refused_or(rpc.get_bound_memory(self.mv.deps, self.props, data.get("session_id"), options))

    async def rpc_key_read(self, data: dict[str, Any]) -> Outcome:
        call = rpc.get_memory(self.mv.deps, self.mv.key, data.get("session_id"), data.get("limit"), data.get("offset"))
        return await refused_or(call)

    async def rpc_search(self, data: dict[str, Any]) -> Outcome:
        options = clone(camel({k: v for k, v in data.items() if k != "query"}))
        return await refused_or(rpc.search_bound_memory(self.mv.deps, self.props, data["query"], options))

    async def rpc_key_search(self, data: dict[str, Any]) -> Outcome:
        call = rpc.search_memory(self.mv.deps, self.mv.key, data["query"], data.get("limit"), data.get("session_id"))
        return await refused_or(call)

    async def rpc_forget(self, data: dict[str, Any]) -> Outcome:
        options = clone(camel({"session_id": data.get("session_id")}))
        return await refused_or(rpc.forget_bound_memory(self.mv.deps, self.props, data["ids"], options))

    async def rpc_key_forget(self, data: dict[str, Any]) -> Outcome:
        return await refused_or(rpc.forget_memory(self.mv.deps, self.mv.key, data["ids"], data.get("session_id")))

    def mcp_tool(self, name: str) -> Callable[[dict[str, Any]], Awaitable[Outcome]]:
        async def call(data: dict[str, Any]) -> Outcome:
            answer = await self.mcp.call_tool(name, {k: v for k, v in data.items() if v is not None})
            if not answer.is_error:
                assert isinstance(answer.structured_content, dict)
                return Outcome(result=answer.structured_content)
            text = " ".join(getattr(block, "text", "") for block in answer.content)
            # The SDK says which tool failed; memvault's refusal follows as "code: message".
            code, _, message = text.removeprefix(f"Error executing tool {name}: ").partition(": ")
            return Outcome(message=message, code=code)

        return call

    async def cli(self, *args: str) -> Outcome:
        self.capsys.readouterr()
        argv = [*args, "--key", self.mv.key, "--data-dir", self.mv.deps.settings.data_dir]
        # The CLI runs its own event loop, as it does in a shell.
        code = await asyncio.to_thread(cli.main, argv)
        out, err = self.capsys.readouterr()
        if code == 0:
            return Outcome(result=json.loads(out))
        (line,) = [line for line in err.splitlines() if line.startswith("error: ")]
        return Outcome(message=line.removeprefix("error: "))

    @staticmethod
    def options(data: dict[str, Any], flags: dict[str, str]) -> list[str]:
        return [part for name, flag in flags.items() if data.get(name) is not None for part in (flag, str(data[name]))]

    async def cli_search(self, data: dict[str, Any]) -> Outcome:
        flags = {"limit": "--limit", "budget_tokens": "--budget", "session_id": "--session"}
        return await self.cli("search", data["query"], *self.options(data, flags))

    async def cli_forget(self, data: dict[str, Any]) -> Outcome:
        return await self.cli("forget", *data["ids"], *self.options(data, {"session_id": "--session"}))

    async def cli_stats(self, data: dict[str, Any]) -> Outcome:
        return await self.cli("stats")

    def client_calls(self, operation: str) -> dict[str, Callable[[dict[str, Any]], Awaitable[Outcome]]]:
        def bind(client: MemoryClient) -> Callable[[dict[str, Any]], Awaitable[Outcome]]:
            async def call(data: dict[str, Any]) -> Outcome:
                if operation == "store":
                    return await refused_or(client.save(data.get("session_id"), data["messages"], data.get("metadata")))
                if operation == "read":
                    return await refused_or(client.get(data.get("session_id"), data.get("limit"), data.get("offset") or 0))
                return await refused_or(client.search(data["query"], data.get("limit"), data.get("session_id")))

            return call

        return {name: bind(client) for name, client in self.clients.items()}


Opened = Callable[[], AbstractAsyncContextManager[Surfaces]]


@pytest.fixture
def surfaces(memvault: Memvault, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Opened:
    """Opens every surface; within the test itself, since the MCP session's task group must close
    in the task that opened it."""
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")

    @asynccontextmanager
    async def opened() -> AsyncIterator[Surfaces]:
        server = mcp_server(memvault.deps, lambda _: CallerTokens(memory_key=memvault.key))
        async with Client(server) as mcp:
            yield Surfaces(memvault, mcp, capsys)

    return opened


def validator(memvault: Memvault, result: str) -> Draft202012Validator:
    schemas = create_app(memvault.deps).openapi()["components"]["schemas"]
    return Draft202012Validator({"$ref": f"#/components/schemas/{result}", "components": {"schemas": schemas}})


def shape(value: Any) -> Any:
    """The keys of an answer, nested (items by their first entry), without the values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items() if key not in {"metrics", "vaults", "cache"}}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__ if value is not None else None


def lamp(session: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"The harbour lamp for {session} hangs by the blue door.", "id": f"{session}-1"},
            {"role": "assistant", "content": "Noted.", "id": f"{session}-2", "metadata": {"via": session}}]


def good_input(operation: str, surface: str) -> dict[str, Any]:
    session = f"s-{surface}"
    return {
        "store": {"messages": lamp(session), "metadata": {"batch": 1}, "session_id": session},
        "read": {"session_id": session, "limit": 5, "offset": 0},
        "search": {"query": QUERY, "limit": 3, "session_id": session},
        "forget": {"ids": [f"{session}-2"], "session_id": session},
        "stats": {},
    }[operation]


@pytest.mark.parametrize("operation", list(RESULTS))
async def test_every_surface_answers_an_operation_in_its_one_shape(surfaces: Opened, operation: str) -> None:
    answers: dict[str, Any] = {}
    async with surfaces() as every:
        check = validator(every.mv, RESULTS[operation])
        for surface, call in every.supporting(operation).items():
            if operation != "store":
                await every.http_store({"messages": lamp(f"s-{surface}"), "session_id": f"s-{surface}"})
            outcome = await call(good_input(operation, surface))
            assert outcome.result is not None, (surface, outcome)
            check.validate(outcome.result)
            answers[surface] = outcome.result
    assert len(answers) >= 2
    shapes = {surface: shape(answer) for surface, answer in answers.items()}
    first = next(iter(shapes.values()))
    assert all(found == first for found in shapes.values()), shapes
    if operation == "forget":
        assert all(answer["forgotten"] == [f"s-{surface}-2"] for surface, answer in answers.items()), answers
    if operation == "search":
        assert all(any("harbour lamp" in item["text"] for item in answer["items"]) for answer in answers.values())


async def test_both_rpc_families_answer_exactly_alike(surfaces: Opened) -> None:
    async with surfaces() as every:
        await every.http_store({"messages": lamp("same"), "session_id": "same"})
        page = {"session_id": "same", "limit": 2, "offset": 0}
        assert (await every.rpc_read(page)).result == (await every.rpc_key_read(page)).result
        found = {"query": QUERY, "limit": 1, "session_id": "same"}
        primary, alias = (await every.rpc_search(found)).result, (await every.rpc_key_search(found)).result
        assert primary is not None and alias is not None
        assert primary["items"] == alias["items"] and primary["tokens"] == alias["tokens"]
        again = {"messages": lamp("same"), "session_id": "same"}
        first, second = (await every.rpc_store(again)).result, (await every.rpc_key_store(again)).result
        assert first is not None and second is not None
        assert first == {**second, "updated_at": first["updated_at"]}
        gone = {"ids": ["same-1", "nope"], "session_id": "same"}
        assert (await every.rpc_forget(gone)).result == {"forgotten": ["same-1"], "not_found": ["nope"]}
        assert (await every.rpc_key_forget(gone)).result == {"forgotten": [], "not_found": ["same-1", "nope"]}


HALF_A_PAIR = ("holds a lone UTF-16 surrogate (such as \\ud800 without its pair), which is not a character; "
               "send the text as UTF-8")
BAD_INPUT = [
    ("search", {"query": QUERY, "limit": 0}, "limit must be a whole number from 1 to 500"),
    ("search", {"query": QUERY, "session_id": "s" * 201}, "session_id must be 1 to 200 printable characters"),
    ("search", {"query": " ", "limit": 2}, "query must be non-empty text"),
    ("store", {"messages": [{"role": "narrator", "content": "x"}]},
     "messages[0].role must be one of user, assistant, system, tool, got 'narrator'"),
    ("store", {"messages": [{"role": "user", "content": "x", "id": "i" * 201}]},
     "messages[0].id must be 1 to 200 printable characters"),
    ("store", {"messages": [{"role": "user", "content": "x"}], "session_id": "4111 1111 1111 1111"},
     "session_id looks like it contains a secret (card_number); session_ids are identifiers"),
    ("store", {"messages": [{"role": "user", "content": "cut in half: \ud83d"}]}, f"messages[0].content {HALF_A_PAIR}"),
    ("search", {"query": "\udfff where"}, f"query {HALF_A_PAIR}"),
    ("read", {"limit": 0}, "limit must be a whole number from 1 to 500"),
    ("read", {"session_id": "s" * 201}, "session_id must be 1 to 200 printable characters"),
    ("forget", {"ids": ["m1"], "session_id": "s" * 201}, "session_id must be 1 to 200 printable characters"),
]


@pytest.mark.parametrize(("operation", "data", "message"), BAD_INPUT, ids=lambda v: v if isinstance(v, str) else "")
async def test_every_surface_refuses_the_same_bad_input_alike(
    surfaces: Opened, operation: str, data: dict[str, Any], message: str
) -> None:
    async with surfaces() as every:
        refusals = {surface: await call(data) for surface, call in every.supporting(operation).items()}
        stats = (await every.http_json("GET", "/v1/memory/stats")({})).result
    assert len(refusals) >= 4
    for surface, outcome in refusals.items():
        assert outcome.result is None and outcome.message == message, (surface, outcome)
        assert outcome.code in (None, "invalid_request"), (surface, outcome)
        assert outcome.status in (None, 422), (surface, outcome)
    assert refusals["http"].status == 422
    # Nothing was stored, and no session vault was made for a refused call.
    assert stats is not None and set(stats["vaults"]) <= {"core"}
    assert all(v["vault"]["messages"] + v["vault"]["buffered_messages"] == 0 for v in stats["vaults"].values())


# Ids of any printable characters: path and query syntax, percent signs, spaces, non-ASCII, 200 long.
HOSTILE_IDS = ["a/b", "a/../b", "/lead", "trail/", "50%", "%2F", "what?x=1&y", "#tag", "two words", "ünï/cødé ☕",
               "+plus+", "x" * 200]


async def test_an_id_of_any_printable_characters_is_forgotten_on_every_surface(surfaces: Opened) -> None:
    async with surfaces() as opened:
        for surface, forget in opened.supporting("forget").items():
            session = f"s/{surface}?#% é"
            messages = [{"role": "user", "content": f"Note {n} of {surface}.", "id": i} for n, i in enumerate(HOSTILE_IDS)]
            stored = await opened.http_store({"messages": messages, "session_id": session.encode()})
            assert stored.result is not None, (surface, stored)
            for message_id in HOSTILE_IDS:
                answer = await forget({"ids": [message_id], "session_id": session})
                assert answer.result == {"forgotten": [message_id], "not_found": []}, (surface, message_id, answer)
            left = await opened.http_read({"session_id": session})
            assert left.result is not None and left.result["items"] == [], (surface, left)


async def test_a_forget_path_without_an_id_is_refused_and_clears_nothing(surfaces: Opened) -> None:
    async with surfaces() as opened:
        await opened.http_store({"messages": lamp("kept")})
        refused = await opened.http("DELETE", "/v1/memory/", headers=opened.mv.auth)
        assert refused.status == 422 and refused.message is not None and "needs a message id" in refused.message
        page = await opened.http_read({})
        assert page.result is not None and len(page.result["items"]) == 2

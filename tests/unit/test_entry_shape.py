"""The Workers entry and the Vault Durable Object on CPython.

``workers``, ``js`` and ``pyodide`` exist only inside the Workers runtime, so this test installs
minimal stand-ins in ``sys.modules`` for its own duration: identity conversions, and a DO storage
whose SQL runs on sqlite3. Everything behind them (runtime, core, local stores) is real. The same
Vault class also runs inside real Pyodide in the tests/pyodide tier.
"""

from __future__ import annotations

import inspect
import sqlite3
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))

from suites import vault as vault_suite

from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.errors import Unauthorized
from memvault.core.memory.vault_table import VAULT_OPERATIONS
from memvault.core.ports import VaultClient
from memvault.runtime import rpc

ROOT = Path(__file__).resolve().parents[2]
JSNULL = type("JsNull", (), {"__repr__": lambda self: "null"})()
EDGE_MODULES = ("entry", "durable_objects", "durable_objects.vault", "memvault.adapters.cloudflare.convert",
                "memvault.adapters.cloudflare.do_sql", "memvault.adapters.cloudflare.rpc_stub",
                "memvault.adapters.cloudflare.vaults")


class _Uint8Array:
    def __init__(self, size: int) -> None:
        self.data = bytes(size)

    @classmethod
    def new(cls, size: int) -> _Uint8Array:
        return cls(size)

    def assign(self, data: bytes) -> None:
        self.data = bytes(data)


def _sql_value(value: Any) -> Any:
    if value is JSNULL:
        return None
    return value.data if isinstance(value, _Uint8Array) else value


class _Base:
    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


class _BindingWrapper:
    """Stands in for the SDK's binding wrappers: it refuses every attribute, so only the JS object
    that ``python_to_rpc`` hands back works."""

    def __init__(self, binding: Any) -> None:
        vars(self)["binding"] = binding

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the wrapper's {name} was used instead of the JS object inside")


def _python_to_rpc(value: Any) -> Any:
    return vars(value)["binding"] if isinstance(value, _BindingWrapper) else value


async def _unused_asgi_fetch(*_: Any, **__: Any) -> Any:
    raise AssertionError("replaced by the test that serves a request")


def _standins() -> dict[str, types.ModuleType]:
    workers = types.ModuleType("workers")
    workers.WorkerEntrypoint = type("WorkerEntrypoint", (_Base,), {})  # type: ignore[attr-defined]
    workers.DurableObject = type("DurableObject", (_Base,), {})  # type: ignore[attr-defined]
    workers.python_to_rpc = _python_to_rpc  # type: ignore[attr-defined]
    asgi = types.ModuleType("workers.asgi")
    asgi.fetch = _unused_asgi_fetch  # type: ignore[attr-defined]
    workers.asgi = asgi  # type: ignore[attr-defined]
    js = types.ModuleType("js")
    js.Object = types.SimpleNamespace(fromEntries=dict)  # type: ignore[attr-defined]
    js.Uint8Array = _Uint8Array  # type: ignore[attr-defined]
    ffi = types.ModuleType("pyodide.ffi")
    ffi.JsProxy = type("JsProxy", (), {})  # type: ignore[attr-defined]
    ffi.JsException = type("JsException", (Exception,), {})  # type: ignore[attr-defined]
    ffi.jsnull = JSNULL  # type: ignore[attr-defined]
    ffi.to_js = lambda value, **_: value  # type: ignore[attr-defined]
    ffi.create_once_callable = lambda f: f  # type: ignore[attr-defined]
    pyodide = types.ModuleType("pyodide")
    pyodide.ffi = ffi  # type: ignore[attr-defined]
    return {"workers": workers, "workers.asgi": asgi, "js": js, "pyodide": pyodide, "pyodide.ffi": ffi}


@pytest.fixture
def edge(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    for name, module in _standins().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.syspath_prepend(str(ROOT / "src"))
    for name in EDGE_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    import entry

    yield entry
    # Modules imported against the stand-ins must not outlive this test.
    for name in EDGE_MODULES:
        sys.modules.pop(name, None)


class SqliteDurableObjectStorage:
    """``ctx.storage`` of a SQLite-backed Durable Object, over sqlite3."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self.sql = self

    def exec(self, query: str, *params: Any) -> Any:
        rows = [dict(r) for r in self._conn.execute(query, [_sql_value(p) for p in params])]
        return types.SimpleNamespace(toArray=lambda: rows)

    def transactionSync(self, work: Callable[[], Any]) -> Any:
        self._conn.execute("SAVEPOINT work")
        try:
            result = work()
        except BaseException:
            self._conn.execute("ROLLBACK TO work")
            self._conn.execute("RELEASE work")
            raise
        self._conn.execute("RELEASE work")
        return result


def test_entry_registers_the_durable_object_and_exposes_every_handler(edge: types.ModuleType) -> None:
    from durable_objects.vault import Vault

    assert edge.Vault is Vault
    assert issubclass(edge.Default, sys.modules["workers"].WorkerEntrypoint)
    for handler in ("fetch", "scheduled", "get_memory", "save_memory", "search_memory", "forget_memory",
                    "getMemory", "saveMemory", "searchMemory", "forgetMemory"):
        assert inspect.iscoroutinefunction(getattr(edge.Default, handler)), handler


async def test_client_interface_binds_the_key_named_by_the_callers_props(
    edge: types.ModuleType, deps: Deps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memvault.runtime.workers.build_deps", lambda env, ctx: deps)
    key, _ = await keys.create_key(deps.db, "bot", deps.clock())
    bot = edge.Default(types.SimpleNamespace(props={rpc.MEMORY_KEY_PROP: key.id}), object())
    ack = await bot.saveMemory("chat-1", [{"role": "user", "content": "Remember the blue door.", "id": "d1"}], {"chat": 1})
    assert ack["message_ids"] == ["d1"] and ack["messages_accepted"] == 1
    page = await bot.getMemory("chat-1", {"limit": 5})
    assert page["session_id"] == "chat-1" and [m["metadata"] for m in page["items"]] == [{"chat": 1}]
    found = await bot.searchMemory("blue door", {"sessionId": "chat-1"})
    assert any("blue door" in r["text"] for r in found["items"])
    assert await bot.forgetMemory(["d1", "d2"], {"sessionId": "chat-1"}) == {"forgotten": ["d1"], "not_found": ["d2"]}
    assert (await bot.getMemory("chat-1"))["items"] == []
    stranger = edge.Default(types.SimpleNamespace(), object())
    with pytest.raises(Unauthorized):
        await stranger.getMemory("chat-1")


def test_the_runtime_finds_one_vault_rpc_method_per_operation(edge: types.ModuleType) -> None:
    # The DO client calls the stub by the operations' names. Workers runtimes expose the public
    # plain functions of the class: found with dir() through its bases, or (earlier ones) in the
    # class's own namespace only; both must find exactly the operations.
    protocol = {name for name in vars(VaultClient) if not name.startswith("_") and callable(getattr(VaultClient, name))}
    assert protocol == set(VAULT_OPERATIONS)
    own = {name for name, fn in vars(edge.Vault).items() if not name.startswith("_") and callable(fn)}
    found = {name for name in dir(edge.Vault) if not name.startswith("_")
             and isinstance(next(vars(c)[name] for c in edge.Vault.__mro__ if name in vars(c)), types.FunctionType)}
    assert own == found == protocol
    assert all(inspect.iscoroutinefunction(getattr(edge.Vault, name)) for name in own)


@pytest.mark.parametrize("check", vault_suite.CHECKS, ids=lambda c: c.__name__)
async def test_the_vault_contract_holds_through_the_durable_object_class(edge: types.ModuleType, check: Any) -> None:
    from memvault.adapters.cloudflare.vaults import DurableObjectVaultDirectory

    objects = {"k:core": edge.Vault(types.SimpleNamespace(storage=SqliteDurableObjectStorage()), types.SimpleNamespace())}
    namespace = types.SimpleNamespace(idFromName=lambda name: name, get=objects.__getitem__)
    await check(DurableObjectVaultDirectory(namespace).vault("k:core"))


async def test_vault_delegates_to_the_core_store_over_do_sql(edge: types.ModuleType) -> None:
    ctx = types.SimpleNamespace(storage=SqliteDurableObjectStorage())
    vault = edge.Vault(ctx, types.SimpleNamespace(MEMVAULT_VECTOR_MEMORY_MB="1"))
    words = "the Lisbon office lease renews in March and costs 4200 euros a month; " * 4  # a chunk in six
    messages = [{"role": "user", "content": f"{words} ({i})", "timestamp": 1000.0 + i, "id": f"m{i}", "model": None}
                for i in range(6)]
    appended = await vault.append(messages)
    assert appended["rows"] and appended["accepted"] == 6
    stats = await vault.stats()
    assert stats["chunks"] >= 1
    found = await vault.search({"text": "Lisbon lease", "vector": None, "depth": 10, "since": None})
    assert found and all(hit["channel"] in {"keyword", "terms", "context"} for hit in found)
    vectors = {row["id"]: [1.0, 0.0, float(i), 0.5] for i, row in enumerate(appended["rows"])}
    assert await vault.attach_embeddings("test-model", vectors) == len(vectors)
    near = await vault.search({"text": "", "vector": [1.0, 0.0, 0.0, 0.5], "depth": 3, "since": None})
    assert any(hit["channel"] == "vector" for hit in near)
    assert await vault.delete_older_than(10_000.0)
    assert (await vault.stats())["chunks"] == 0
    # A second instance over the same storage finds the schema already migrated.
    again = edge.Vault(ctx, types.SimpleNamespace())
    assert (await again.stats())["messages"] == 0


async def test_vault_and_env_helpers_take_the_js_object_out_of_sdk_wrappers(edge: types.ModuleType) -> None:
    from memvault.adapters.cloudflare.env import env_value, js_binding

    storage = SqliteDurableObjectStorage()
    vault = edge.Vault(types.SimpleNamespace(storage=_BindingWrapper(storage)), types.SimpleNamespace())
    assert (await vault.stats())["messages"] == 0
    database = object()
    env = types.SimpleNamespace(DB=_BindingWrapper(database))
    assert js_binding(env_value(env, "DB")) is database
    assert env_value(env, "VAULT") is None and js_binding(None) is None


async def test_scheduled_runs_maintenance_with_this_invocations_deps(
    edge: types.ModuleType, deps: Deps, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    built: list[tuple[Any, Any]] = []

    def build(env: Any, ctx: Any) -> Deps:
        built.append((env, ctx))
        return deps

    monkeypatch.setattr("memvault.runtime.workers.build_deps", build)
    env, ctx = object(), object()
    await edge.Default(ctx, env).scheduled(types.SimpleNamespace(cron="17 3 * * *"))
    assert built == [(env, ctx)]
    assert '"schedule": "17 3 * * *"' in capsys.readouterr().out


async def test_fetch_hands_the_app_env_and_ctx_to_the_asgi_adapter(
    edge: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []

    async def fetch(app: Any, request: Any, env: Any, ctx: Any = None) -> str:
        calls.append((app, request, env, ctx))
        return "response"

    monkeypatch.setattr(sys.modules["workers.asgi"], "fetch", fetch)
    monkeypatch.setattr("memvault.runtime.workers.build_app", lambda env, ctx, signal: ("app", env, ctx, signal))
    env, ctx = object(), object()
    incoming = types.SimpleNamespace(signal="the request's signal")
    request = types.SimpleNamespace(js_object=incoming)
    assert await edge.Default(ctx, env).fetch(request) == "response"
    # ctx lets the adapter stream the body instead of buffering it whole; the signal tells the app
    # when the client hangs up.
    assert calls == [(("app", env, ctx, "the request's signal"), incoming, env, ctx)]


async def test_rpc_save_search_and_get_run_the_core_functions_for_the_key_given(deps: Deps) -> None:
    _, secret = await keys.create_key(deps.db, "bot", deps.clock())
    stored = await rpc.save_memory(
        deps, secret, "chat-9", [{"role": "user", "content": "My passport number ends in 5521."}], {"model": "bot-1"}
    )
    assert stored["messages_accepted"] == 1
    found = await rpc.search_memory(deps, secret, "passport", 5, "chat-9")
    assert any("5521" in item["text"] for item in found["items"])
    page = await rpc.get_memory(deps, secret, "chat-9", None, None)
    assert [item["content"] for item in page["items"]] == ["My passport number ends in 5521."]
    assert page["items"][0]["model"] == "bot-1"
    assert (await rpc.get_memory(deps, secret, "chat-9", 10, 1))["items"] == []


async def test_rpc_refuses_an_unknown_key(deps: Deps) -> None:
    with pytest.raises(Unauthorized):
        await rpc.search_memory(deps, "mk_not-a-key", "anything", 5, None)

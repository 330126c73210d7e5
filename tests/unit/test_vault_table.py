"""The vault operation table: the port's methods are the store's public methods, signature for
signature; only they can be called through a client or served to one; and the plain data on the
wire keeps the shapes the Durable Objects already deployed speak."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.adapters.local.vaults import LocalVaultDirectory
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.vault_table import VAULT_OPERATIONS, PlainDataVault, serve, vault_operation
from memvault.core.models import EmbeddingModel, Message, SearchQuery, UsageNote
from memvault.core.ports import VaultClient
from memvault.core.settings import load_settings

LIMITS = VaultLimits.of(load_settings({}))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VaultStore]:
    sql = SqliteSql(tmp_path / "vault.sqlite3")
    yield VaultStore(sql, LIMITS)
    sql.close()


def test_every_public_store_method_is_an_operation_with_the_ports_signature() -> None:
    public = {name for name, member in vars(VaultStore).items() if inspect.isfunction(member) and not name.startswith("_")}
    assert public == set(VAULT_OPERATIONS)
    assert len(VAULT_OPERATIONS) == len(set(VAULT_OPERATIONS)) >= 16
    for name in VAULT_OPERATIONS:
        port, store = getattr(VaultClient, name), getattr(VaultStore, name)
        assert inspect.iscoroutinefunction(port) and not inspect.iscoroutinefunction(store), name
        assert get_type_hints(port) == get_type_hints(store), name
        shape = [(p.name, p.kind, p.default) for p in inspect.signature(port).parameters.values()]
        assert shape == [(p.name, p.kind, p.default) for p in inspect.signature(store).parameters.values()], name


@pytest.mark.parametrize("name", ["_sql", "_state", "_written", "__init__", "__class__", "execute", "drop_code_index"])
def test_nothing_but_an_operation_is_served(name: str, store: VaultStore) -> None:
    with pytest.raises(AttributeError):
        serve(store, name, [])


@pytest.mark.parametrize("name", ["_state", "_written", "execute", "drop_code_index", "transaction"])
async def test_a_client_has_no_other_call_of_the_store(name: str, tmp_path: Path) -> None:
    async def send(*_: Any) -> Any:
        raise AssertionError("sent")

    directory = LocalVaultDirectory(tmp_path / "vaults", LIMITS)
    try:
        for vault in (directory.vault("k:core"), PlainDataVault(send)):
            with pytest.raises(AttributeError):
                getattr(vault, name)
    finally:
        directory.close()


def test_a_caller_one_deploy_behind_may_leave_out_the_parameters_added_since(store: VaultStore) -> None:
    appended = serve(store, "append", [[Message("user", "The red door.", 1.0, "m1").to_dict()]])
    assert appended["accepted"] == 1
    assert serve(store, "attach_embeddings", ["test-2d", {}]) == 0
    with pytest.raises(TypeError):
        serve(store, "attach_embeddings", ["test-2d"])  # embeddings has no default
    with pytest.raises(TypeError):
        serve(store, "stats", [1])


def test_the_wire_keeps_the_shapes_deployed_vaults_speak() -> None:
    said = Message("user", "The red door.", 1.0, "m1")
    assert vault_operation("append").plain_arguments([[said]], {}) == [[said.to_dict()]]
    assert vault_operation("append").plain_arguments([(said,)], {"model": EmbeddingModel("e", 2)}) == [
        [said.to_dict()], {"model_id": "e", "dimension": 2}
    ]
    assert vault_operation("attach_embeddings").plain_arguments(["e", {"r1": (0.5, 1)}], {}) == ["e", {"r1": [0.5, 1]}]
    usage = UsageNote(1.0, {"messages_stored": 1})
    assert vault_operation("append").plain_arguments([[said], None, usage], {}) == [
        [said.to_dict()], None, {"at": 1.0, "counts": {"messages_stored": 1}}
    ]
    query = SearchQuery(text="door", vector=(1.0, 0.0), depth=5)
    assert vault_operation("search").plain_arguments([query], {}) == [{"text": "door", "vector": [1.0, 0.0], "depth": 5}]
    assert vault_operation("forget").plain_arguments([("m1",)], {}) == [["m1"]]
    assert vault_operation("rows").plain_arguments([None, 10], {}) == [None, 10]
    assert vault_operation("changes").plain_arguments([0], {"max_entries": 5, "max_rows": 6}) == [0, 5, 6]
    assert [c.row.id for c in vault_operation("search").result([])] == []
    assert vault_operation("delete_older_than").result(["a", "b"]) == ["a", "b"]

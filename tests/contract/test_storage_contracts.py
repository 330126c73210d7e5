"""Runs the SQL, database and vault contract suites against the local adapters."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from suites import database, mirror, search_plan, sync_sql, vault

from memvault.adapters.local.database import SqliteDatabase
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.adapters.local.vaults import LocalVaultDirectory
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.vault_table import PlainDataVault, serve
from memvault.core.settings import load_settings

Check = Callable[[Any], Awaitable[None]]


@pytest.mark.parametrize("check", sync_sql.CHECKS, ids=lambda c: c.__name__)
async def test_sync_sql_contract(check: Check, tmp_path: Path) -> None:
    sql = SqliteSql(tmp_path / "vault.sqlite3")
    try:
        await check(sql)
    finally:
        sql.close()


@pytest.mark.parametrize("check", database.CHECKS, ids=lambda c: c.__name__)
async def test_database_contract(check: Check, tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "db.sqlite3")
    try:
        await check(db)
    finally:
        db.close()


@pytest.mark.parametrize("check", mirror.CHECKS, ids=lambda c: c.__name__)
async def test_mirror_contract(check: Check, tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "db.sqlite3")
    try:
        await check(db)
    finally:
        db.close()


@pytest.mark.parametrize("check", vault.CHECKS, ids=lambda c: c.__name__)
async def test_vault_contract(check: Check, tmp_path: Path) -> None:
    defaults = load_settings({})
    directory = LocalVaultDirectory(tmp_path / "vaults", VaultLimits.of(defaults))
    try:
        await check(directory.vault("key_test:core"))
    finally:
        directory.close()


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


@pytest.mark.parametrize("check", vault.CHECKS, ids=lambda c: c.__name__)
async def test_vault_contract_over_plain_data(check: Check, tmp_path: Path) -> None:
    """The Durable Object's client and its ``serve`` joined by JSON instead of the RPC runtime:
    every argument and answer of every operation survives as plain data."""
    sql = SqliteSql(tmp_path / "vault.sqlite3")
    store = VaultStore(sql, VaultLimits.of(load_settings({})))

    async def send(name: str, *arguments: Any) -> Any:
        return _json(serve(store, name, _json(list(arguments))))

    try:
        await check(PlainDataVault(send))
    finally:
        sql.close()


@pytest.mark.parametrize("check", search_plan.CHECKS, ids=lambda c: c.__name__)
async def test_search_plan_contract(check: Check, tmp_path: Path) -> None:
    sql, db = SqliteSql(tmp_path / "vault.sqlite3"), SqliteDatabase(tmp_path / "db.sqlite3")
    try:
        await check(search_plan.SqlPair(sql, db))
    finally:
        sql.close()
        db.close()


def test_vault_file_names_differ_for_every_vault_name_even_ignoring_case() -> None:
    from memvault.adapters.local.vaults import vault_filename

    names = ["k:session:!00", "k:session:\u2100", "k:session:Chat", "k:session:chat", "k:session:%21", "k:session:!",
             "k:session:" + "x" * 300, "k:session:" + "x" * 299 + "y", "k:core", "k:session:core"]
    files = [vault_filename(n) for n in names]
    assert len({f.lower() for f in files}) == len(names)
    assert all(len(f) < 255 and "/" not in f for f in files)


async def test_a_vault_file_of_the_earlier_naming_is_moved_not_lost(tmp_path: Path) -> None:
    from memvault.core.models import Message

    limits = VaultLimits.of(load_settings({}))
    earlier = LocalVaultDirectory(tmp_path, limits)
    await earlier.vault("k:session:Chat").append([Message("user", "kept across the rename", 1.0, "m1")])
    earlier.close()
    (tmp_path / "k%3Asession%3A%43hat.sqlite3").rename(tmp_path / "k%3Asession%3AChat.sqlite3")
    reopened = LocalVaultDirectory(tmp_path, limits)
    try:
        assert [m.id for m in await reopened.vault("k:session:Chat").pending()] == ["m1"]
    finally:
        reopened.close()


async def test_a_vault_file_another_process_wrote_is_searched_with_its_new_vectors(tmp_path: Path) -> None:
    from memvault.core.models import Message, SearchQuery

    limits = VaultLimits.of(load_settings({}))
    server, importer = LocalVaultDirectory(tmp_path, limits), LocalVaultDirectory(tmp_path, limits)
    try:
        ours = server.vault("k:core")
        first = await ours.append([Message("user", "The kettle is in the attic.", 1.0, "a1")])
        await ours.attach_embeddings("test-4d", {}, {job.id: vault.basis(0) for job in first.to_embed})
        await ours.flush()
        found = await ours.search(SearchQuery(text="zzzz", vector=tuple(vault.basis(1)), depth=5))
        assert {c.row.source_ids for c in found if c.channel == "vector"} == {("a1",)}
        assert (await ours.stats()).search_memory_bytes > 0  # its vector codes are held in memory now
        theirs = importer.vault("k:core")  # a second connection to the same file, as `memvault import` opens
        second = await theirs.append([Message("user", "The ladder is in the shed.", 2.0, "b1")])
        await theirs.attach_embeddings("test-4d", {}, {job.id: vault.basis(1) for job in second.to_embed})
        await theirs.flush()
        found = await ours.search(SearchQuery(text="zzzz", vector=tuple(vault.basis(1)), depth=5))
        assert next(c for c in found if c.channel == "vector").row.source_ids == ("b1",)
    finally:
        server.close()
        importer.close()

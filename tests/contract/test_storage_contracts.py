"""Runs the SQL, database and vault contract suites against the local adapters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from suites import database, mirror, search_plan, sync_sql, vault

from memvault.adapters.local.database import SqliteDatabase
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.adapters.local.vaults import LocalVaultDirectory
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
    directory = LocalVaultDirectory(
        tmp_path / "vaults", chunk_tokens=defaults.chunk_tokens, overlap_tokens=defaults.chunk_overlap_tokens
    )
    try:
        await check(directory.vault("key_test:core"))
    finally:
        directory.close()


@pytest.mark.parametrize("check", search_plan.CHECKS, ids=lambda c: c.__name__)
async def test_search_plan_contract(check: Check, tmp_path: Path) -> None:
    sql, db = SqliteSql(tmp_path / "vault.sqlite3"), SqliteDatabase(tmp_path / "db.sqlite3")
    try:
        await check(search_plan.SqlPair(sql, db))
    finally:
        sql.close()
        db.close()

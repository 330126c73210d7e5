"""Runs the ``BlobStore`` contract suite against the local adapter (files under a folder)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from suites.blob_store import CHECKS

from memvault.adapters.local.blobs import LocalBlobStore
from memvault.core.errors import InvalidInput
from memvault.core.ports import BlobStore


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_local_blob_store_contract(tmp_path: Path, check: Callable[[BlobStore], Awaitable[None]]) -> None:
    await check(LocalBlobStore(tmp_path / "blobs"))


@pytest.mark.parametrize("key", ["", "/etc/passwd", "../outside", "a/../../b", "a\\b"])
async def test_keys_cannot_leave_the_folder(tmp_path: Path, key: str) -> None:
    store = LocalBlobStore(tmp_path / "blobs")
    with pytest.raises(InvalidInput):
        await store.put(key, b"x")

"""Runs the ``Cipher`` contract suite against the local adapter (the ``cryptography`` library);
tests/pyodide runs it against WebCrypto."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from suites.cipher import CHECKS

from memvault.adapters.local.cipher import AesGcmCipher
from memvault.core.ports import Cipher


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_cipher_contract(check: Callable[[Cipher], Awaitable[None]]) -> None:
    await check(AesGcmCipher())

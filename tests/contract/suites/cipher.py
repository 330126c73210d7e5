"""Contract of the ``Cipher`` port (AES-256-GCM) and of the sealed format built on it: plain async
checks with bare ``assert``, run by pytest against the local adapter (the ``cryptography``
library) and inside Pyodide against WebCrypto.

The two runtimes must read each other's output: every adapter answers a published AES-256-GCM test
vector, opens a value the local adapter sealed (``SEALED_ON_CPYTHON``), and the value each seals
here is kept in ``ARTIFACTS`` (the Pyodide runner reports it, and a CPython test opens it)."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable

from memvault.core.credentials.sealing import seal, sealing_secret, unseal
from memvault.core.errors import Undecryptable
from memvault.core.ports import Cipher

# The GCM specification's test case 16 (AES-256, 60-byte plaintext, 20 bytes of associated data).
GCM_KEY = bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
GCM_NONCE = bytes.fromhex("cafebabefacedbaddecaf888")
GCM_PLAINTEXT = bytes.fromhex(
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
)
GCM_ASSOCIATED = bytes.fromhex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
GCM_SEALED = bytes.fromhex(
    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    "76fc6ece0f4e1768cddf8853bb2d551b"
)

SECRET_TEXT = base64.b64encode(bytes(range(32))).decode("ascii")
BINDING = ("provider_keys", "key_test/openai")
PLAINTEXT = "sk-test-sealed-on-cpython-0123"
# Sealed once by the local adapter (``sealing.seal``) under SECRET_TEXT and BINDING.
SEALED_ON_CPYTHON = "v1.28d201a4fff9.jCR489hVG54LLm7S.UYjpphyfPQzZQJQzmlw8tV9fUdkZC7XSghUieF1rV6_iSXclltTEh9A8nIi4sg"
SEALED_HERE_PLAINTEXT = "sk-ant-sealed-by-this-runtime-4567"
# What this runtime sealed, for the other runtime to open.
ARTIFACTS: dict[str, str] = {}


async def check_answers_the_published_test_vector(cipher: Cipher) -> None:
    assert await cipher.encrypt(GCM_KEY, GCM_NONCE, GCM_PLAINTEXT, GCM_ASSOCIATED) == GCM_SEALED
    assert await cipher.decrypt(GCM_KEY, GCM_NONCE, GCM_SEALED, GCM_ASSOCIATED) == GCM_PLAINTEXT


async def check_round_trips_empty_and_binary_plaintext(cipher: Cipher) -> None:
    for plaintext in (b"", bytes(range(256)) * 3):
        sealed = await cipher.encrypt(GCM_KEY, GCM_NONCE, plaintext, b"")
        assert len(sealed) == len(plaintext) + 16
        assert await cipher.decrypt(GCM_KEY, GCM_NONCE, sealed, b"") == plaintext


async def _refused(cipher: Cipher, key: bytes, nonce: bytes, sealed: bytes, associated: bytes) -> None:
    try:
        await cipher.decrypt(key, nonce, sealed, associated)
    except Undecryptable:
        return
    raise AssertionError("altered input was opened")


async def check_refuses_any_altered_input(cipher: Cipher) -> None:
    flipped = bytes([GCM_SEALED[0] ^ 1]) + GCM_SEALED[1:]
    flipped_tag = GCM_SEALED[:-1] + bytes([GCM_SEALED[-1] ^ 0x80])
    await _refused(cipher, GCM_KEY, GCM_NONCE, flipped, GCM_ASSOCIATED)
    await _refused(cipher, GCM_KEY, GCM_NONCE, flipped_tag, GCM_ASSOCIATED)
    await _refused(cipher, GCM_KEY, GCM_NONCE, GCM_SEALED[:-1], GCM_ASSOCIATED)
    await _refused(cipher, GCM_KEY, GCM_NONCE, GCM_SEALED, GCM_ASSOCIATED + b"x")
    await _refused(cipher, GCM_KEY, GCM_NONCE, GCM_SEALED, b"")
    await _refused(cipher, GCM_KEY, bytes(12), GCM_SEALED, GCM_ASSOCIATED)
    await _refused(cipher, bytes(32), GCM_NONCE, GCM_SEALED, GCM_ASSOCIATED)


async def check_opens_what_cpython_sealed(cipher: Cipher) -> None:
    secret = sealing_secret(SECRET_TEXT)
    assert await unseal(cipher, [secret], SEALED_ON_CPYTHON, BINDING) == PLAINTEXT


async def check_a_sealed_value_opens_only_where_it_was_sealed(cipher: Cipher) -> None:
    secret, other = sealing_secret(SECRET_TEXT), sealing_secret(base64.b64encode(bytes(32)).decode())
    sealed = await seal(cipher, secret, SEALED_HERE_PLAINTEXT, BINDING)
    again = await seal(cipher, secret, SEALED_HERE_PLAINTEXT, BINDING)
    assert sealed != again  # a fresh nonce each time
    assert SEALED_HERE_PLAINTEXT not in sealed
    assert await unseal(cipher, [other, secret], sealed, BINDING) == SEALED_HERE_PLAINTEXT
    ARTIFACTS["sealed"] = sealed
    format_, version, nonce, body = sealed.split(".")
    elsewhere = [
        (sealed, ("provider_keys", "key_test/anthropic")),  # moved to another provider's row
        (sealed, ("provider_keys", "key_other/openai")),  # moved to another key's row
        (".".join((format_, version, nonce, body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1])), BINDING),
        (".".join((format_, version, again.split(".")[2], body)), BINDING),  # another nonce
        (".".join((format_, other.version, nonce, body)), BINDING),  # claims another secret
        (".".join(("v2", version, nonce, body)), BINDING),
        (sealed.rsplit(".", 1)[0], BINDING),
    ]
    for value, binding in elsewhere:
        try:
            await unseal(cipher, [secret, other], value, binding)
        except Undecryptable as refused:
            assert SEALED_HERE_PLAINTEXT not in refused.message
        else:
            raise AssertionError(f"{value!r} opened under {binding}")
    try:
        await unseal(cipher, [other], sealed, BINDING)
    except Undecryptable as refused:
        assert secret.version in refused.message  # says which secret it needs, never the secret
    else:
        raise AssertionError("opened without the secret that sealed it")


CHECKS: list[Callable[[Cipher], Awaitable[None]]] = [
    check_answers_the_published_test_vector,
    check_round_trips_empty_and_binary_plaintext,
    check_refuses_any_altered_input,
    check_opens_what_cpython_sealed,
    check_a_sealed_value_opens_only_where_it_was_sealed,
]

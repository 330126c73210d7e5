"""The ``Cipher`` port on Workers: AES-256-GCM through WebCrypto (``crypto.subtle``), which appends
the 16-byte tag to the ciphertext as the local adapter's library does, so either opens what the
other sealed."""

from __future__ import annotations

from typing import Any

import js
from pyodide.ffi import JsException

from memvault.adapters.cloudflare.convert import bytes_of, js_bytes, to_js
from memvault.core.errors import Undecryptable


async def _key(raw: bytes, usage: str) -> Any:
    return await js.crypto.subtle.importKey("raw", js_bytes(raw), to_js({"name": "AES-GCM"}), False, to_js([usage]))


def _algorithm(nonce: bytes, associated_data: bytes) -> Any:
    return to_js({"name": "AES-GCM", "iv": nonce, "additionalData": associated_data, "tagLength": 128})


class WebCryptoCipher:
    async def encrypt(self, key: bytes, nonce: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
        sealed = await js.crypto.subtle.encrypt(_algorithm(nonce, associated_data), await _key(key, "encrypt"),
                                                js_bytes(plaintext))
        return bytes_of(sealed)

    async def decrypt(self, key: bytes, nonce: bytes, ciphertext: bytes, associated_data: bytes) -> bytes:
        try:
            opened = await js.crypto.subtle.decrypt(_algorithm(nonce, associated_data), await _key(key, "decrypt"),
                                                    js_bytes(ciphertext))
        except JsException as exc:  # WebCrypto's OperationError: the tag does not verify
            if "OperationError" not in str(exc):
                raise
            raise Undecryptable("the sealed data does not open with this key and associated data") from None
        return bytes_of(opened)

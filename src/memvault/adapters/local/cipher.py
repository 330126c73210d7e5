"""The ``Cipher`` port on CPython: AES-256-GCM from the ``cryptography`` library (the local
extra; it has no Pyodide wheel, so the Worker seals with WebCrypto instead)."""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from memvault.core.errors import Undecryptable


class AesGcmCipher:
    async def encrypt(self, key: bytes, nonce: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
        return AESGCM(key).encrypt(nonce, plaintext, associated_data)

    async def decrypt(self, key: bytes, nonce: bytes, ciphertext: bytes, associated_data: bytes) -> bytes:
        try:
            return AESGCM(key).decrypt(nonce, ciphertext, associated_data)
        except InvalidTag:
            raise Undecryptable("the sealed data does not open with this key and associated data") from None

"""Secrets sealed at rest: the one envelope format both runtimes write and read.

A sealed value is text, ``v1.<version>.<nonce>.<ciphertext>``: AES-256-GCM (the ``Cipher`` port)
under a sealing secret, a fresh random 96-bit nonce per seal, the tag appended to the ciphertext,
both in URL-safe base64. ``version`` names the secret that sealed it (a fingerprint of the secret,
so no operator has to number secrets), which is how a value sealed under an earlier secret is
still opened while the deployment moves to a new one. The associated data binds the value to
where it is stored (``binding``): the same ciphertext under another row's binding does not open."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.errors import Undecryptable
from memvault.core.ports import Cipher
from memvault.core.settings import sealing_key

FORMAT = "v1"
NONCE_BYTES = 12
TAG_BYTES = 16
_VERSION_LABEL = b"memvault sealing secret version"


@dataclass(frozen=True)
class SealingSecret:
    key: bytes = b""
    version: str = ""

    def __repr__(self) -> str:  # never the key, whatever prints or logs this
        return f"SealingSecret(version={self.version!r})"


def sealing_secret(text: str) -> SealingSecret:
    """The secret a setting's base64 text names, with its version."""
    key = sealing_key(text)
    version = hmac.new(key, _VERSION_LABEL, hashlib.sha256).hexdigest()[:12]
    return SealingSecret(key, version)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _associated(version: str, binding: Sequence[str]) -> bytes:
    return "\x00".join(("memvault sealed", FORMAT, version, *binding)).encode("utf-8")


async def seal(cipher: Cipher, secret: SealingSecret, plaintext: str, binding: Sequence[str]) -> str:
    nonce = secrets.token_bytes(NONCE_BYTES)
    sealed = await cipher.encrypt(secret.key, nonce, plaintext.encode("utf-8"), _associated(secret.version, binding))
    return ".".join((FORMAT, secret.version, _b64(nonce), _b64(sealed)))


def version_of(sealed: str) -> str:
    """The version of the secret ``sealed`` was sealed under ("" when it is not a sealed value)."""
    parts = sealed.split(".")
    return parts[1] if len(parts) == 4 and parts[0] == FORMAT else ""


async def unseal(cipher: Cipher, known: Sequence[SealingSecret], sealed: str, binding: Sequence[str]) -> str:
    """The plaintext of ``sealed``, opened with whichever of ``known`` sealed it; ``Undecryptable``
    when none did, or when it was altered or belongs to another binding."""
    parts = sealed.split(".")
    if len(parts) != 4 or parts[0] != FORMAT:
        raise Undecryptable("the stored value is not in a sealed format this version reads")
    secret = next((s for s in known if s.version == parts[1]), None)
    if secret is None:
        raise Undecryptable(f"the stored value was sealed under a secret this deployment does not have "
                            f"(version {parts[1]})")
    try:
        nonce, ciphertext = _unb64(parts[2]), _unb64(parts[3])
    except (binascii.Error, ValueError):
        raise Undecryptable("the stored value is not valid base64") from None
    if len(nonce) != NONCE_BYTES or len(ciphertext) < TAG_BYTES:
        raise Undecryptable("the stored value is cut short")
    opened = await cipher.decrypt(secret.key, nonce, ciphertext, _associated(secret.version, binding))
    try:
        return opened.decode("utf-8")
    except UnicodeDecodeError:
        raise Undecryptable("the stored value is not text") from None

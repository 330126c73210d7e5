"""RS256 JSON Web Tokens, verified in pure Python: the Workers runtime (Pyodide) has no
``cryptography``, so the RSA check is the textbook one (RFC 8017, RSASSA-PKCS1-v1_5 with SHA-256)
over Python's big integers, identical on both runtimes. Only RS256 is accepted: ``none``, HMAC and
every other ``alg`` are refused before any key is looked at."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from memvault.core.errors import Unauthorized

ALGORITHM = "RS256"
# DER of the DigestInfo header for SHA-256 (RFC 8017 section 9.2, note 1).
SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
MIN_MODULUS_BITS = 2048
MAX_TOKEN_CHARS = 16_384
# Clocks of the issuer and this server may differ a little.
LEEWAY_SECONDS = 60
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


class InvalidToken(Unauthorized, status=401, code="unauthorized"):
    """A token that is malformed, wrongly signed, or not meant for us."""


@dataclass(frozen=True)
class RsaPublicKey:
    n: int
    e: int

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> RsaPublicKey:
        """An RSA signing key of a JWKS; anything else (another key type or algorithm, a weak
        modulus) raises ``ValueError``, so the caller can leave it out of its key set."""
        if jwk.get("kty") != "RSA" or jwk.get("alg", ALGORITHM) != ALGORITHM or jwk.get("use", "sig") != "sig":
            raise ValueError("not an RS256 signing key")
        key = cls(n=int.from_bytes(_b64url(jwk["n"]), "big"), e=int.from_bytes(_b64url(jwk["e"]), "big"))
        if key.n.bit_length() < MIN_MODULUS_BITS or key.e < 3 or key.e % 2 == 0:
            raise ValueError("RSA key too weak")
        return key

    def verifies(self, message: bytes, signature: bytes) -> bool:
        """RSASSA-PKCS1-v1_5 verification with SHA-256: the signature raised to ``e`` mod ``n``
        must be exactly the padded digest of ``message``."""
        size = (self.n.bit_length() + 7) // 8
        if len(signature) != size:
            return False
        s = int.from_bytes(signature, "big")
        if s >= self.n:
            return False
        encoded = pow(s, self.e, self.n).to_bytes(size, "big")
        digest_info = SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
        expected = b"\x00\x01" + b"\xff" * (size - len(digest_info) - 3) + b"\x00" + digest_info
        return hmac.compare_digest(encoded, expected)


@dataclass(frozen=True)
class SignedToken:
    """A compact JWS taken apart, its signature not yet checked."""

    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes

    @property
    def key_id(self) -> str:
        kid = self.header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("the token names no signing key")
        return kid


def parse_rs256(token: str) -> SignedToken:
    """Split and decode a compact JWS whose header says RS256; anything else is an InvalidToken."""
    if len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
        raise InvalidToken("the token is not a signed JWT")
    head, body, signature = token.split(".")
    try:
        header, claims = json.loads(_b64url(head)), json.loads(_b64url(body))
        raw_signature = _b64url(signature)
    except ValueError as exc:
        raise InvalidToken("the token is not a signed JWT") from exc
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise InvalidToken("the token is not a signed JWT")
    if header.get("alg") != ALGORITHM:
        raise InvalidToken(f"only {ALGORITHM} tokens are accepted")
    return SignedToken(header, claims, f"{head}.{body}".encode("ascii"), raw_signature)


def verified_claims(token: SignedToken, key: RsaPublicKey, issuer: str, audiences: Collection[str], now: float) -> dict[str, Any]:
    """The token's claims, once its signature, issuer, audience and lifetime all check out."""
    if not key.verifies(token.signing_input, token.signature):
        raise InvalidToken("the token's signature does not verify")
    claims = token.claims
    if claims.get("iss") != issuer:
        raise InvalidToken("the token was issued by someone else")
    audience = claims.get("aud")
    named = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    if not any(isinstance(a, str) and a in audiences for a in named):
        raise InvalidToken("the token is meant for another application")
    expires = claims.get("exp")
    if not _is_number(expires) or now > float(expires) + LEEWAY_SECONDS:
        raise InvalidToken("the token has expired")
    starts = claims.get("nbf")
    if starts is not None and (not _is_number(starts) or now < float(starts) - LEEWAY_SECONDS):
        raise InvalidToken("the token is not valid yet")
    return claims


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _b64url(text: Any) -> bytes:
    if not isinstance(text, str) or not _BASE64URL.fullmatch(text):
        raise ValueError("not base64url text")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as exc:
        raise ValueError("not base64url text") from exc

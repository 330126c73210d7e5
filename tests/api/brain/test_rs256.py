"""The pure-Python RS256 verifier (``core/credentials/jwt.py``) against signatures made by OpenSSL through
``cryptography``: every genuine signature verifies, every altered one does not, and only strong
RS256 signing keys and RS256 headers are taken at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from access_env import b64url, compact, jwk_of, new_key, rs256
from cryptography.hazmat.primitives.asymmetric import rsa

from memvault.core.credentials.jwt import (
    LEEWAY_SECONDS,
    InvalidToken,
    RsaPublicKey,
    SignedToken,
    parse_rs256,
    verified_claims,
)

NOW = 1_800_000_000.0
ISSUER = "https://team.cloudflareaccess.com"


@pytest.fixture(scope="module", params=[2048, 3072], ids=lambda bits: f"{bits}-bit")
def key(request: pytest.FixtureRequest) -> rsa.RSAPrivateKey:
    return new_key(request.param)


def test_genuine_signatures_verify_and_altered_ones_do_not(key: rsa.RSAPrivateKey) -> None:
    public = RsaPublicKey.from_jwk(jwk_of(key, "k"))
    for message in (b"", b"a", b"header.payload" * 50, bytes(range(256))):
        signature = rs256(key)(message)
        assert public.verifies(message, signature)
        assert not public.verifies(message + b"x", signature)
        flipped = bytearray(signature)
        flipped[len(flipped) // 2] ^= 1
        assert not public.verifies(message, bytes(flipped))
        assert not public.verifies(message, signature[1:])
        assert not public.verifies(message, b"\x00" + signature)
    size = (public.n.bit_length() + 7) // 8
    assert not public.verifies(b"m", public.n.to_bytes(size, "big"))
    assert not public.verifies(b"m", (public.n + 1).to_bytes(size, "big"))


@pytest.mark.parametrize(
    "change",
    [{"kty": "EC"}, {"alg": "RS512"}, {"use": "enc"}, {"e": b64url(b"\x01\x00\x00")}, {"e": b64url(b"\x01")}],
    ids=["not RSA", "another algorithm", "an encryption key", "even exponent", "exponent 1"],
)
def test_only_rs256_signing_keys_are_taken(key: rsa.RSAPrivateKey, change: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        RsaPublicKey.from_jwk({**jwk_of(key, "k"), **change})


def test_a_weak_modulus_is_refused() -> None:
    with pytest.raises(ValueError, match="too weak"):
        RsaPublicKey.from_jwk(jwk_of(new_key(1024), "k"))


def _token(header: Any, claims: Any = None) -> str:
    return f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims or {}).encode())}.c2ln"


@pytest.mark.parametrize(
    "token",
    [_token({"alg": "none"}), _token({"alg": "rs256"}), _token({"alg": "RS512"}), _token({}), _token(["RS256"]),
     _token({"alg": "RS256"}, ["claims"]), "a.b", "a.b.c.d", "x" * 20_000, "e30.e30.c2ln=", "e30.e30.c2l+"],
    ids=["none", "lower case", "RS512", "no alg", "header not an object", "claims not an object", "two parts",
         "four parts", "too long", "padded", "standard base64"],
)
def test_only_rs256_compact_tokens_parse(token: str) -> None:
    with pytest.raises(InvalidToken):
        parse_rs256(token)


def test_a_token_without_a_key_id_names_no_key() -> None:
    with pytest.raises(InvalidToken, match="no signing key"):
        _ = parse_rs256(_token({"alg": "RS256"})).key_id


def _signed(key: rsa.RSAPrivateKey, **claims: Any) -> SignedToken:
    return parse_rs256(compact({"alg": "RS256", "kid": "k"}, {"iss": ISSUER, "aud": "app", "exp": NOW + 10, **claims}, rs256(key)))


def test_lifetime_is_checked_with_a_small_leeway(key: rsa.RSAPrivateKey) -> None:
    public = RsaPublicKey.from_jwk(jwk_of(key, "k"))
    at_edge = _signed(key, exp=NOW - LEEWAY_SECONDS, nbf=NOW + LEEWAY_SECONDS)
    assert verified_claims(at_edge, public, ISSUER, {"app"}, NOW)["aud"] == "app"
    for claims in ({"exp": NOW - LEEWAY_SECONDS - 1}, {"nbf": NOW + LEEWAY_SECONDS + 1}, {"exp": "soon"}, {"exp": True}):
        with pytest.raises(InvalidToken):
            verified_claims(_signed(key, **claims), public, ISSUER, {"app"}, NOW)


def test_audience_may_be_a_list_and_must_name_ours(key: rsa.RSAPrivateKey) -> None:
    public = RsaPublicKey.from_jwk(jwk_of(key, "k"))
    assert verified_claims(_signed(key, aud=["other", "app"]), public, ISSUER, {"app"}, NOW)
    for audience in (["other"], [], None, 7, [["app"]]):
        with pytest.raises(InvalidToken, match="another application"):
            verified_claims(_signed(key, aud=audience), public, ISSUER, {"app"}, NOW)

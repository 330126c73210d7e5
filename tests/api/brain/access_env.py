"""A stand-in Cloudflare Access team for the tests: RSA keys generated here, tokens signed with
them (by ``cryptography``, independent of the pure-Python verifier under test), and the team's
certs URL served by a small HTTP server on 127.0.0.1 that counts how often it is asked."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from memvault.core.credentials.access import CERTS_PATH

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from local_http import local_http_server

AUD = "aud-7c1b0e55d2f94a0c9c4e"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def new_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def jwk_of(key: rsa.RSAPrivateKey, kid: str) -> dict[str, str]:
    numbers = key.public_key().public_numbers()
    return {"kid": kid, "kty": "RSA", "alg": "RS256", "use": "sig", "e": b64url(_int_bytes(numbers.e)), "n": b64url(_int_bytes(numbers.n))}


def compact(header: dict[str, Any], claims: dict[str, Any], sign: Any) -> str:
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    return f"{signing_input}.{b64url(sign(signing_input.encode('ascii')))}"


def rs256(key: rsa.RSAPrivateKey) -> Any:
    return lambda data: key.sign(data, padding.PKCS1v15(), hashes.SHA256())


def hs256(secret: bytes) -> Any:
    return lambda data: hmac.new(secret, data, hashlib.sha256).digest()


@dataclass
class Team:
    """The keys an Access team publishes (``published``) and signs with."""

    issuer: str = ""
    published: dict[str, rsa.RSAPrivateKey] = field(default_factory=dict)
    fetches: int = 0

    def key_set(self) -> dict[str, Any]:
        # Cloudflare's certs document also carries the keys as PEM certificates; they are ignored.
        return {"keys": [jwk_of(key, kid) for kid, key in self.published.items()], "public_cert": {"kid": "x", "cert": "-----BEGIN CERTIFICATE-----"}}

    def claims(self, now: float, **changes: Any) -> dict[str, Any]:
        claims = {"aud": [AUD], "email": "fam@example.com", "exp": int(now) + 600, "iat": int(now), "nbf": int(now),
                  "iss": self.issuer, "sub": "7335d417-61da-459d-899c-0a01c76a2f94", "type": "app"}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, now: float, kid: str = "k1", key: rsa.RSAPrivateKey | None = None, alg: str = "RS256", **changes: Any) -> str:
        signer = key or self.published[kid]
        return compact({"alg": alg, "kid": kid, "typ": "JWT"}, self.claims(now, **changes), rs256(signer))


@contextmanager
def team_server(team: Team) -> Iterator[Team]:
    """Serve ``team``'s certs URL on 127.0.0.1; ``team.issuer`` becomes the server's origin."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != CERTS_PATH:
                self.send_error(404)
                return
            team.fetches += 1
            payload = json.dumps(team.key_set()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with local_http_server(Handler) as origin:
        team.issuer = origin
        yield team

"""Sign-in by Cloudflare Access, through the HTTP API: a token signed by a key the team publishes
(served on 127.0.0.1 the way Access serves its certs URL) resolves, through ``auth_of``, to the
brain credential its email is mapped to, and reads only that credential's scopes. Every other
token is a 401; a verified email nobody mapped is a 403."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from access_env import AUD, Team, b64url, compact, hs256, new_key, team_server
from brain_env import Brain, close_brain, open_brain
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from memvault.core.credentials.access import REFETCH_INTERVAL_SECONDS

HEADER = "Cf-Access-Jwt-Assertion"
USERS = {"Fam@Example.com": "family", "boss@example.com": "writer"}
Keys = dict[str, rsa.RSAPrivateKey]


@pytest.fixture(scope="module")
def keys() -> Keys:
    return {name: new_key() for name in ("k1", "k2", "rogue")}


async def open_access_brain(data_dir: Path, issuer: str, **overrides: str) -> Brain:
    settings = {
        "MEMVAULT_ACCESS_TEAM_DOMAIN": issuer,
        "MEMVAULT_ACCESS_AUD": f"another-app,{AUD}",
        "MEMVAULT_ACCESS_USERS": json.dumps(USERS),
        **overrides,
    }
    return await open_brain(data_dir, **settings)


@pytest.fixture
async def access(tmp_path: Path, keys: Keys) -> AsyncIterator[tuple[Brain, Team]]:
    with team_server(Team(published={"k1": keys["k1"]})) as team:
        brain = await open_access_brain(tmp_path, team.issuer)
        try:
            yield brain, team
        finally:
            await close_brain(brain)


async def signed_in(brain: Brain, token: str, path: str = "/portal/me", **params: Any) -> httpx.Response:
    return await brain.client.get(path, params=params, headers={HEADER: token})


async def test_a_valid_token_reads_through_the_mapped_credential(access: tuple[Brain, Team]) -> None:
    brain, team = access
    for scope in ("family", "business"):
        await brain.write({"source": f"notes:{scope}", "scope": scope, "content": f"The {scope} garden has a pear tree."})
    token = team.token(brain.clock.now)
    me = await signed_in(brain, token)
    assert me.status_code == 200, me.text
    assert me.json() == {"kind": "brain", "name": "family", "scopes": ["family"], "writer": False}
    found = await signed_in(brain, token, "/memory/search", q="garden pear")
    assert [row["scope"] for row in found.json()["results"]] == ["family"]
    recalled = (await signed_in(brain, token, "/recall")).json()
    assert {row["scope"] for row in recalled["recent"]} == {"family"}
    # The mapped credential may read but not write, whoever signed in.
    refused = await brain.client.post("/memory/write", json={"scope": "family", "source": "x", "content": "y"}, headers={HEADER: token})
    assert refused.status_code == 403
    boss = await signed_in(brain, team.token(brain.clock.now, email="BOSS@example.com"))
    assert boss.json()["name"] == "writer" and boss.json()["writer"] is True
    assert team.fetches == 1


def _tampered(team: Team, keys: Keys, now: float) -> str:
    head, _, signature = team.token(now).split(".")
    forged = b64url(json.dumps(team.claims(now, email="boss@example.com")).encode())
    return f"{head}.{forged}.{signature}"


def _hs256_with_the_public_key(team: Team, keys: Keys, now: float) -> str:
    public = keys["k1"].public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return compact({"alg": "HS256", "kid": "k1", "typ": "JWT"}, team.claims(now), hs256(public))


REFUSED: dict[str, Callable[[Team, Keys, float], str]] = {
    "wrong audience": lambda team, keys, now: team.token(now, aud=["someone-elses-app"]),
    "no audience": lambda team, keys, now: team.token(now, aud=None),
    "wrong issuer": lambda team, keys, now: team.token(now, iss="https://evil.cloudflareaccess.com"),
    "expired": lambda team, keys, now: team.token(now, exp=int(now) - 120),
    "no expiry": lambda team, keys, now: team.token(now, exp=None),
    "not valid yet": lambda team, keys, now: team.token(now, nbf=int(now) + 600),
    "signed by another key": lambda team, keys, now: team.token(now, key=keys["rogue"]),
    "claims changed after signing": _tampered,
    "unknown key id": lambda team, keys, now: team.token(now, kid="k9", key=keys["rogue"]),
    "no email": lambda team, keys, now: team.token(now, email=None),
    "alg none": lambda team, keys, now: compact({"alg": "none", "kid": "k1"}, team.claims(now), lambda data: b""),
    "HS256 keyed with the public key": _hs256_with_the_public_key,
    "RS256 header over an HS256 signature": lambda team, keys, now: compact({"alg": "RS256", "kid": "k1"}, team.claims(now), hs256(b"k")),
    "not a JWT": lambda team, keys, now: "not-a-jwt",
    "bad base64": lambda team, keys, now: "e30.e30.!!!",
}


async def test_every_other_token_is_a_401(access: tuple[Brain, Team], keys: Keys) -> None:
    brain, team = access
    for case, make in REFUSED.items():
        response = await signed_in(brain, make(team, keys, brain.clock.now), "/memory/search", q="garden")
        assert response.status_code == 401, (case, response.text)
        assert response.json()["error"]["code"] == "unauthorized", case


@pytest.mark.parametrize("case", ["alg none", "HS256 keyed with the public key", "not a JWT"])
async def test_a_token_of_another_algorithm_is_refused_before_any_key_is_fetched(
    access: tuple[Brain, Team], keys: Keys, case: str
) -> None:
    brain, team = access
    assert (await signed_in(brain, REFUSED[case](team, keys, brain.clock.now))).status_code == 401
    assert team.fetches == 0


async def test_a_verified_email_nobody_mapped_is_a_403(access: tuple[Brain, Team]) -> None:
    brain, team = access
    response = await signed_in(brain, team.token(brain.clock.now, email="stranger@example.com"))
    assert response.status_code == 403, response.text
    assert "stranger" not in response.text


async def test_a_brain_credential_wins_over_the_access_token(access: tuple[Brain, Team]) -> None:
    brain, team = access
    headers = {HEADER: team.token(brain.clock.now, email="boss@example.com"), **brain.headers("business")}
    response = await brain.client.get("/portal/me", headers=headers)
    assert response.json()["name"] == "business"
    wrong = await brain.client.get("/portal/me", headers={HEADER: team.token(brain.clock.now), "Authorization": "Bearer nope"})
    assert wrong.status_code == 401


async def test_keys_are_kept_for_their_ttl_and_refetched_for_a_new_key_id(access: tuple[Brain, Team], keys: Keys) -> None:
    brain, team = access
    for _ in range(3):
        assert (await signed_in(brain, team.token(brain.clock.now))).status_code == 200
    assert team.fetches == 1
    # Access rotates: a token under a key id we do not hold refetches the set, at most once a minute.
    team.published["k2"] = keys["k2"]
    assert (await signed_in(brain, team.token(brain.clock.now, kid="k2"))).status_code == 401
    assert team.fetches == 1
    brain.clock.advance(REFETCH_INTERVAL_SECONDS)
    assert (await signed_in(brain, team.token(brain.clock.now, kid="k2"))).status_code == 200
    assert team.fetches == 2
    assert (await signed_in(brain, team.token(brain.clock.now, kid="k7", key=keys["rogue"]))).status_code == 401
    assert team.fetches == 2
    # A retired key stops working once the cached set expires.
    retired = team.published.pop("k1")
    brain.clock.advance(3599)
    assert (await signed_in(brain, team.token(brain.clock.now, key=retired))).status_code == 200
    brain.clock.advance(1)
    assert (await signed_in(brain, team.token(brain.clock.now, key=retired))).status_code == 401
    assert team.fetches == 3


async def test_without_access_configured_the_token_is_ignored(tmp_path: Path, keys: Keys) -> None:
    team = Team(issuer="https://team.cloudflareaccess.com", published={"k1": keys["k1"]})
    brain = await open_brain(tmp_path, MEMVAULT_ACCESS_USERS=json.dumps(USERS))
    try:
        response = await signed_in(brain, team.token(brain.clock.now))
        assert response.status_code == 401 and "brain credential (or a memory key granted brain scopes) is required" in response.text
    finally:
        await close_brain(brain)


async def test_an_unreachable_team_is_a_503(tmp_path: Path, keys: Keys) -> None:
    with team_server(Team(published={"k1": keys["k1"]})) as team:
        pass  # the server is gone: its port refuses connections
    brain = await open_access_brain(tmp_path, team.issuer)
    try:
        response = await signed_in(brain, team.token(brain.clock.now))
        assert response.status_code == 503 and response.json()["error"]["code"] == "access_unavailable"
    finally:
        await close_brain(brain)


@pytest.mark.parametrize(
    "overrides",
    [{"MEMVAULT_ACCESS_AUD": ""}, {"MEMVAULT_ACCESS_USERS": json.dumps({"fam@example.com": "nobody"})},
     {"MEMVAULT_ACCESS_USERS": "[1]"},
     {"MEMVAULT_ACCESS_USERS": json.dumps({"ann@example.com": "family", "ANN@Example.com": "writer"})}],
    ids=["no audience", "unknown credential name", "not an object", "one email twice"],
)
async def test_half_configured_access_is_a_500_not_a_way_in(tmp_path: Path, keys: Keys, overrides: dict[str, str]) -> None:
    with team_server(Team(published={"k1": keys["k1"]})) as team:
        brain = await open_access_brain(tmp_path, team.issuer, **overrides)
        try:
            response = await signed_in(brain, team.token(brain.clock.now))
            assert response.status_code == 500, response.text
        finally:
            await close_brain(brain)


async def test_emails_are_compared_exactly_but_for_ascii_case(tmp_path: Path, keys: Keys) -> None:
    """`straße@` and `strasse@` are two mailboxes: Unicode case folding would make them one user."""
    users = {"straße@example.com": "writer", "strasse@example.com": "family"}
    with team_server(Team(published={"k1": keys["k1"]})) as team:
        brain = await open_access_brain(tmp_path, team.issuer, MEMVAULT_ACCESS_USERS=json.dumps(users))
        try:
            def name_of(email: str) -> Any:
                return signed_in(brain, team.token(brain.clock.now, email=email))

            assert (await name_of("straße@example.com")).json()["name"] == "writer"
            assert (await name_of("STRAßE@EXAMPLE.COM")).json()["name"] == "writer"
            assert (await name_of("strasse@example.com")).json()["name"] == "family"
            assert (await name_of("STRASSE@example.com")).json()["name"] == "family"
            for stranger in ("ſtrasse@example.com", "straẞe@example.com", "straße@example.com\u200b"):
                assert (await name_of(stranger)).status_code == 403, stranger
        finally:
            await close_brain(brain)


# What a page of another site can make a signed-in browser send: the browser attaches the Access
# cookie (Access then adds the assertion) to a form post or a no-cors fetch, with a body that is
# JSON in all but its content type.
OTHER_SITE = {
    "fetch metadata": {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
    "a sibling subdomain": {"Sec-Fetch-Site": "same-site", "Origin": "https://notes.brain.test"},
    "an older browser's origin": {"Origin": "https://evil.example"},
    "a sandboxed frame": {"Origin": "null"},
}


@pytest.mark.parametrize("case", sorted(OTHER_SITE))
async def test_a_request_another_site_made_is_not_signed_in_by_access(access: tuple[Brain, Team], case: str) -> None:
    brain, team = access
    await brain.write({"source": "notes:family", "scope": "family", "content": "The family boat is called Heron."})
    fact_id = (await brain.client.post("/v1/brain/facts/search", json={"query": "boat Heron"},
                                       headers=brain.headers("family"))).json()["results"][0]["id"]
    token = team.token(brain.clock.now, email="boss@example.com")
    forged = {HEADER: token, "Content-Type": "text/plain", **OTHER_SITE[case]}
    writes = [
        ("/memory/write", {"scope": "family", "source": "forged", "content": "The family boat was sold."}),
        ("/v1/brain/facts", {"scope": "family", "source": "forged", "content": "The family boat was sold."}),
        (f"/v1/brain/facts/{fact_id}/retire", {"reason": "forged"}),
        ("/v1/brain/sync", {"direction": "push", "source": "notes:family", "items": []}),
    ]
    for path, body in writes:
        refused = await brain.client.post(path, content=json.dumps(body), headers=forged)
        assert refused.status_code == 403, (path, refused.text)
        assert "another site" in refused.json()["error"]["message"]
    assert await brain.count("source = 'forged'") == 0
    assert await brain.count("id = ? AND superseded_at IS NULL", (fact_id,)) == 1
    # The same browser on the portal's own page, and reads a page of another site cannot see.
    same_origin = {HEADER: token, "Sec-Fetch-Site": "same-origin", "Origin": "http://brain.test"}
    written = await brain.client.post("/v1/brain/facts", json=writes[1][1], headers=same_origin)
    assert written.status_code == 200, written.text
    assert (await brain.client.get("/portal/me", headers={HEADER: token, **OTHER_SITE[case]})).status_code == 200
    # A credential the page sends itself is no cookie: another site's page cannot know it.
    sent = await brain.client.post("/v1/brain/facts/search", json={"query": "boat"},
                                   headers={**brain.headers("family"), **OTHER_SITE[case]})
    assert sent.status_code == 200, sent.text

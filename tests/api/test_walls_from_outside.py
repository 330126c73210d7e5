"""The privacy walls attacked from outside, against the real local server (`memvault serve`), its
command line and the Worker's RPC methods, by a caller holding its own memory key (granted the
business scope of the brain) and its own brain credential, against another key that holds
conversation memory in its core and a session vault, a family-scoped fact and skill, a stored
provider key, receipts, usage and limits.

The attacks, by group:
- the admin surface: every admin route, with every method, spelled as clients and proxies spell
  paths (trailing or doubled slashes, percent escapes, dot segments, another case), with every
  credential but the admin token: nothing answers with data;
- session ids as a way into another vault: another key's session by its name and by names that
  only look like it (case, full-width and zero-width letters, `/`, `..`, `%2F`, NUL, another key's
  vault name, very long), read, searched, cleared, forgotten in and written to, over HTTP, MCP,
  RPC and the command line; the vault files stay apart on a file system that ignores case;
- what is another's and what never was, answered alike: memory and brain credentials unknown or
  revoked, another key's message ids, skills and skill proposals behind a wall, admin ids that name
  a credential of the other kind, the brain's kept paths;
- usage, limits, receipts, stats and stored provider keys: each key reads only its own, a routed
  call never borrows another key's provider key nor, in the other key's session names, its memory;
- the brain's walls on every read path, the kept ones too; MCP's one path and method; the read
  cache asked the victim's question in the same words;
- no secret (memory keys, brain credential, admin token, provider key) in any answer the attacks
  got, the OpenAPI document, the portal's files or the server's log (which also sees secrets handed
  where an id goes); an admin route given a key's secret for its id does not repeat it."""

from __future__ import annotations

import asyncio
import base64
import functools
import http.client
import io
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

import httpx
import pytest

from local_http import local_http_server, memvault_serve
from memvault import cli
from memvault.core.errors import MemvaultError
from memvault.core.settings import load_settings
from memvault.runtime import rpc
from memvault.runtime.local import build_local_deps, close_local_deps

# As the docs make one (`openssl rand -hex 32`).
ADMIN = secrets.token_hex(32)
SEALING = base64.b64encode(b"s" * 32).decode()
PROVIDER_KEY = "sk-proj-" + secrets.token_urlsafe(36)
MESSAGE = "The harbour gate code word is PELICAN."
FACT = "The family safe key hangs behind the lighthouse painting."
SKILL = "harbour-gate"
# What no answer to the attacker may hold.
VICTIMS_TEXT = ("PELICAN", "lighthouse", "Lighthouse routine")
INTRUDER = "INTRUDER was here"
MCP_ACCEPT = ("Accept", "application/json, text/event-stream")


class Upstream(BaseHTTPRequestHandler):
    """A provider that records the key each call came with and answers one short completion."""

    keys: ClassVar[list[str]] = []
    paths: ClassVar[list[str]] = []
    bodies: ClassVar[list[bytes]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            self.bodies.append(body)
            self.keys.append(self.headers.get("Authorization") or "")
            self.paths.append(self.path)
        answer = json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *_: Any) -> None:
        pass


@dataclass
class Site:
    url: str
    data: Path
    log: Path
    env: dict[str, str]
    victim: str
    victim_id: str
    attacker: str
    attacker_id: str
    brain: str  # the attacker's brain credential (business, writer)
    brain_id: str
    revoked: str  # a memory key revoked by the admin
    revoked_id: str
    message_ids: list[str] = field(default_factory=list)
    fact_id: str = ""
    receipt: str = ""
    proposal_id: str = ""
    # Every answer an attack got, for the last check: no secret in any of them.
    answers: list[str] = field(default_factory=list)

    def call(self, method: str, path: str, secret: str | None = None, headers: list[tuple[str, str]] | None = None,
             keep: bool = True, **kwargs: Any) -> httpx.Response:
        """The answer to a call with ``secret`` as the bearer; kept for the last check unless the
        call hands secrets over where an id goes (``keep`` False), which its answer may repeat to it."""
        sent = [("Authorization", f"Bearer {secret}")] if secret else []
        answer = httpx.request(method, self.url + path, headers=sent + (headers or []), timeout=30, **kwargs)
        if keep:
            self.answers.append(f"{answer.headers}\n{answer.text}")
        return answer

    def raw(self, method: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
        """``path`` sent exactly as written (no client normalises its dots, slashes or escapes); the
        status and the body."""
        origin = urlsplit(self.url)
        connection = http.client.HTTPConnection(origin.hostname or "", origin.port, timeout=30)
        try:
            connection.request(method, path, headers=headers)
            answer = connection.getresponse()
            text = answer.read().decode(errors="replace")
        finally:
            connection.close()
        self.answers.append(text)
        return answer.status, text

    def mcp(self, secret: str, tool: str, arguments: dict[str, Any]) -> str:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        answer = self.call("POST", "/mcp", headers=[("X-Memory-Key", secret), MCP_ACCEPT], json=call)
        assert answer.status_code == 200, answer.text
        return answer.text

    def held_secrets(self) -> dict[str, str]:
        return {"victim's key": self.victim, "attacker's key": self.attacker, "brain credential": self.brain,
                "admin token": ADMIN, "provider key": PROVIDER_KEY, "revoked key": self.revoked}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    data = tmp_path_factory.mktemp("walls-outside")
    log = data.parent / "walls-outside.log"
    with local_http_server(Upstream) as upstream, log.open("wb") as output:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(data), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_ADMIN_TOKEN": ADMIN,
               "MEMVAULT_PROVIDER_KEY_SECRET": SEALING, "MEMVAULT_OPENAI_BASE_URL": upstream + "/v1"}
        with memvault_serve(env, output) as url:
            def admin(method: str, path: str, body: Any = None) -> dict[str, Any]:
                answer = httpx.request(method, url + path, json=body, headers={"Authorization": f"Bearer {ADMIN}"},
                                       timeout=30)
                assert answer.is_success, answer.text
                result: dict[str, Any] = answer.json()
                return result

            victim = admin("POST", "/v1/admin/keys", {"label": "victim", "brain_scopes": ["family"], "brain_writer": True})
            attacker = admin("POST", "/v1/admin/keys", {"label": "attacker", "brain_scopes": ["business"],
                                                        "brain_writer": True})
            revoked = admin("POST", "/v1/admin/keys", {"label": "gone"})
            admin("DELETE", f"/v1/admin/keys/{revoked['id']}")
            brain = admin("POST", "/v1/admin/credentials", {"name": "b", "scopes": ["business"], "writer": True})
            admin("PUT", f"/v1/admin/keys/{victim['id']}/providers/openai", {"api_key": PROVIDER_KEY})
            admin("PUT", f"/v1/admin/keys/{victim['id']}/limits", {"requests_per_minute": 977})
            site = Site(url, data, log, env, victim["key"], victim["id"], attacker["key"], attacker["id"],
                        brain["token"], brain["id"], revoked["key"], revoked["id"])
            _seed(site)
            yield site


def _seed(s: Site) -> None:
    for session in (None, "trip", "Trip"):
        stored = s.call("POST", "/v1/memory", s.victim, json={"messages": [{"role": "user", "content": MESSAGE}],
                                                               "session_id": session})
        assert stored.status_code == 200, stored.text
        s.message_ids += stored.json()["message_ids"]
    fact = s.call("POST", "/v1/brain/facts", s.victim, json={"source": "notes:family", "scope": "family", "content": FACT})
    assert fact.status_code == 200, fact.text
    s.fact_id = fact.json()["ids"][0]
    skill = s.call("POST", "/v1/brain/skills", s.victim, json={
        "slug": SKILL, "scope": "family", "name": "Lighthouse routine", "description": "Lighthouse routine",
        "content": "Walk to the lighthouse painting and lift it."})
    assert skill.status_code == 200, skill.text
    proposal = s.call("POST", "/v1/brain/skills/proposals", s.victim, json={
        "title": "Lighthouse routine at night", "scope": "family", "triggers": ["lighthouse at night"],
        "steps": ["Lift the lighthouse painting.", "Take the key."], "source_trail": ["task:1"]})
    assert proposal.status_code == 201, proposal.text
    s.proposal_id = proposal.json()["proposal"]["id"]
    searched = s.call("POST", "/v1/memory/search", s.victim, json={"query": "harbour gate code word lighthouse painting"})
    assert "PELICAN" in searched.text and "lighthouse" in searched.text, searched.text
    s.receipt = searched.headers["X-Memory-Receipt"]
    routed = s.call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", s.victim)],
                    json={"model": "m", "messages": [{"role": "user", "content": "What is the harbour gate code word?"}]})
    assert routed.status_code == 200, routed.text
    assert Upstream.keys == [f"Bearer {PROVIDER_KEY}"]
    assert "PELICAN" in Upstream.bodies[0].decode()  # what the router must inject for no other key
    s.answers.clear()  # the victim's own answers are not attacks


def _victims_memory_is_intact(s: Site) -> None:
    for session in (None, "trip", "Trip"):
        page = s.call("GET", "/v1/memory", s.victim, params={"session_id": session} if session else {}).json()
        contents = [item["content"] for item in page["items"]]
        assert MESSAGE in contents and not [text for text in contents if INTRUDER in text], (session, contents)
    history = s.call("GET", f"/v1/brain/facts/{s.fact_id}/history", s.victim).json()
    assert [version["current"] for version in history["chain"]] == [True]
    assert s.call("GET", f"/v1/brain/skills/{SKILL}", s.victim).status_code == 200
    assert s.call("GET", f"/v1/memory/receipts/{s.receipt}", s.victim).status_code == 200


def _shows_nothing_of_the_victims(text: str) -> list[str]:
    return [word for word in VICTIMS_TEXT if word in text]


ADMIN_ROUTES = [
    ("POST", "/v1/admin/keys"), ("GET", "/v1/admin/keys"), ("DELETE", "/v1/admin/keys/{key}"),
    ("POST", "/v1/admin/credentials"), ("GET", "/v1/admin/credentials"), ("DELETE", "/v1/admin/credentials/{brain}"),
    ("PUT", "/v1/admin/keys/{key}/providers/openai"), ("DELETE", "/v1/admin/keys/{key}/providers/openai"),
    ("GET", "/v1/admin/keys/{key}/providers"), ("POST", "/v1/admin/provider-keys/reseal"),
    ("GET", "/v1/admin/usage"), ("GET", "/v1/admin/keys/{key}/limits"), ("PUT", "/v1/admin/keys/{key}/limits"),
]


def _spellings(path: str) -> list[str]:
    """``path`` as a client, a proxy or an attacker may spell it."""
    rest = path.removeprefix("/v1/admin")
    return [path, path + "/", "/" + path, path.replace("/v1/admin", "/v1//admin"), path.replace("/admin/", "/admin//"),
            path.replace("/v1/admin", "/v1/%61dmin"), path.replace("/v1/admin", "/v1%2Fadmin"),
            path.replace("/v1/admin", "/v1/./admin"), path.replace("/v1/admin", "/v1/x/../admin"),
            path.upper(), "/V1/Admin" + rest, path + "%20", path + "%00", path + ";x", path + "?token=" + ADMIN,
            path + "#x", quote(path, safe="")]


def test_the_admin_surface_answers_nothing_to_any_credential_but_the_admin_token(site: Site) -> None:
    others = {
        "no credential": {},
        "a memory key": {"Authorization": f"Bearer {site.attacker}"},
        "a memory key in its header": {"X-Memory-Key": site.attacker},
        "a brain credential": {"Authorization": f"Bearer {site.brain}"},
        "the admin token in another header": {"X-Memory-Key": ADMIN, "X-Memvault-Brain-Token": ADMIN},
        "the admin token under another scheme": {"Authorization": f"Basic {ADMIN}"},
        "the admin token with more after it": {"Authorization": f"Bearer {ADMIN}x"},
        "the admin token cut short": {"Authorization": f"Bearer {ADMIN[:-1]}"},
        "the admin token in another case": {"Authorization": f"Bearer {ADMIN.upper()}"},
        "the admin token twice": {"Authorization": f"Bearer {ADMIN} {ADMIN}"},
    }
    known = (site.victim_id, site.attacker_id, site.brain_id, '"victim"', "last4", "requests_per_minute")
    failures = []
    for template_method, template in ADMIN_ROUTES:
        path = template.format(key=site.victim_id, brain=site.brain_id)
        attempts = [(spelled, method, name) for spelled in _spellings(path)[1:]
                    for method in (template_method, "HEAD", "OPTIONS")
                    for name in ("no credential", "a memory key", "a brain credential")]
        attempts += [(path, method, name) for method in ("GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH")
                     for name in others]
        for spelled, method, name in attempts:
            headers = others[name]
            status, text = site.raw(method, spelled, {**headers, "Content-Type": "application/json"})
            shown = [word for word in known if word in text]
            if 200 <= status < 300 or shown:
                failures.append(f"{method} {spelled} with {name}: {status} {shown} {text[:160]}")
    assert not failures, "\n".join(failures[:40])
    # memvault's own paths, however spelled, never reach a provider with what the request carries.
    assert not [path for path in Upstream.paths if "admin" in path.lower()], Upstream.paths
    # Nothing changed: the victim's key still answers, its provider key and limits still hold.
    assert site.call("GET", "/v1/memory", site.victim).status_code == 200
    assert site.call("GET", f"/v1/admin/keys/{site.victim_id}/limits", ADMIN).json()["requests_per_minute"] == 977
    providers = site.call("GET", f"/v1/admin/keys/{site.victim_id}/providers", ADMIN).json()["providers"]
    assert [p["provider"] for p in providers] == ["openai"]


LOOKALIKE_SESSIONS = ["trip", "Trip", "TRIP", "ｔｒｉｐ", "trip\u200b", "tr\u0456p", " trip", "trip ", "trip/",
                      "/trip", "../trip", "..", ".", "trip/..", "trip%2F..", "%74rip", "trip\x00", "trip\x00x",
                      "session:trip", "core", "{key}:session:trip", "../{key}:session:trip", "{key}", "*", "%", "_",
                      "trip" + "\u0301", "t" * 201, "t" * 5000]


def _sessions(s: Site) -> list[str]:
    return [name.replace("{key}", s.victim_id) for name in LOOKALIKE_SESSIONS]


def test_a_session_id_is_no_way_into_another_keys_vault_over_http_and_mcp(site: Site) -> None:
    failures = []
    for session in _sessions(site):
        answers = {
            "read": site.call("GET", "/v1/memory", site.attacker, params={"session_id": session}),
            "search": site.call("POST", "/v1/memory/search", site.attacker,
                                json={"query": "harbour gate code word", "session_id": session}),
            "search by header": site.call("POST", "/v1/memory/search", site.attacker, json={
                "query": "harbour gate code word"}, headers=[("X-Session-ID", quote(session))]),
            "store": site.call("POST", "/v1/memory", site.attacker, headers=[("X-Session-ID", quote(session))],
                               json={"messages": [{"role": "user", "content": f"{INTRUDER} ({session[:20]!r})"}]}),
            "store in the body": site.call("POST", "/v1/memory", site.attacker, json={
                "session_id": session, "messages": [{"role": "user", "content": f"{INTRUDER} ({session[:20]!r})"}]}),
            "forget": site.call("POST", "/v1/memory/forget", site.attacker,
                                json={"ids": site.message_ids, "session_id": session}),
            "forget one": site.call("DELETE", f"/v1/memory/{quote(site.message_ids[1], safe='')}", site.attacker,
                                    params={"session_id": session}),
            "clear": site.call("DELETE", "/v1/memory", site.attacker, params={"session_id": session}),
        }
        for tool, arguments in (("memory_search", {"query": "harbour gate code word", "session_id": session}),
                                ("memory_forget", {"ids": site.message_ids, "session_id": session}),
                                ("memory_store", {"session_id": session, "messages": [
                                    {"role": "user", "content": f"{INTRUDER} over MCP"}]})):
            text = site.mcp(site.attacker, tool, arguments)
            if _shows_nothing_of_the_victims(text) or '"forgotten":["' in text.replace(" ", ""):
                failures.append(f"MCP {tool} in {session[:40]!r}: {text[:200]}")
        for name, answer in answers.items():
            leaked = _shows_nothing_of_the_victims(answer.text)
            forgot = name.startswith("forget") and answer.is_success and answer.json()["forgotten"]
            if answer.status_code >= 500 or leaked or forgot:
                failures.append(f"{name} in {session[:40]!r}: {answer.status_code} {leaked} {answer.text[:200]}")
    assert not failures, "\n".join(failures)
    _victims_memory_is_intact(site)


def test_vault_files_stay_apart_where_the_file_system_ignores_case(site: Site) -> None:
    for session in ("Harbour", "harbour", "HARBOUR", "harbour%41", "harbour%61", "harbourA"):
        stored = site.call("POST", "/v1/memory", site.attacker, json={
            "session_id": session, "messages": [{"role": "user", "content": f"note for {session}"}]})
        assert stored.status_code == 200, stored.text
    files = [path.name for path in (site.data / "vaults").iterdir() if path.name.endswith(".sqlite3")]
    folded = [name.casefold() for name in files]
    assert len(set(folded)) == len(folded), sorted(files)
    for session in ("Harbour", "harbour", "HARBOUR", "harbour%41", "harbour%61", "harbourA"):
        page = site.call("GET", "/v1/memory", site.attacker, params={"session_id": session}).json()
        assert [item["content"] for item in page["items"]] == [f"note for {session}"], session


def test_the_rpc_methods_take_no_way_into_another_keys_vault(site: Site) -> None:
    async def attacks() -> list[str]:
        deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(site.data), "MEMVAULT_EMBEDDER": "hash"}))
        failures = []
        bound = {rpc.MEMORY_KEY_PROP: site.attacker_id}
        try:
            calls = []
            for session in _sessions(site):
                calls += [
                    ("get_memory", rpc.get_memory(deps, site.attacker, session)),
                    ("search_memory", rpc.search_memory(deps, site.attacker, "harbour gate code word", None, session)),
                    ("forget_memory", rpc.forget_memory(deps, site.attacker, site.message_ids, session)),
                    ("getMemory", rpc.get_bound_memory(deps, bound, session)),
                    ("searchMemory", rpc.search_bound_memory(deps, bound, "harbour gate code word", {"sessionId": session})),
                    ("forgetMemory", rpc.forget_bound_memory(deps, bound, site.message_ids, {"sessionId": session})),
                ]
            # The key named in an options object or in the props beside the attacker's own.
            calls += [
                ("searchMemory naming the victim's key", rpc.search_bound_memory(
                    deps, bound, "harbour gate code word", {"memoryKeyId": site.victim_id, "keyId": site.victim_id})),
                ("getMemory with the victim's key id in props", rpc.get_bound_memory(
                    deps, {rpc.MEMORY_KEY_PROP: site.victim_id.upper()}, "trip")),
                ("getMemory with a revoked key's id", rpc.get_bound_memory(
                    deps, {rpc.MEMORY_KEY_PROP: site.revoked_id}, "trip")),
                ("get_memory with a revoked key", rpc.get_memory(deps, site.revoked, "trip")),
                ("get_memory with the victim's key id", rpc.get_memory(deps, site.victim_id, "trip")),
            ]
            for name, call in calls:
                try:
                    text = json.dumps(await call, ensure_ascii=False)
                except MemvaultError as refused:
                    text = f"{refused.code}: {refused.message}"
                if _shows_nothing_of_the_victims(text) or '"forgotten": ["' in text:
                    failures.append(f"{name}: {text[:200]}")
                site.answers.append(text)
        finally:
            await close_local_deps(deps)
        return failures

    failures = asyncio.run(attacks())
    assert not failures, "\n".join(failures)
    _victims_memory_is_intact(site)


def test_the_command_line_takes_no_way_into_another_keys_vault(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `memvault ARGS` through its entry point in this process, as tests/cli's shell runs it, beside
    # the running server on the same folder: the same commands without a second of CPU each to start
    # a process and import memvault (tests/cli runs it as a process, and the server always is one).
    for name, value in site.env.items():
        if name.startswith("MEMVAULT_") and name != "MEMVAULT_ADMIN_TOKEN":
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEMVAULT_ADMIN_TOKEN", raising=False)

    def run(*args: str, stdin: str | None = None) -> str:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((stdin or "").encode())))
        capsys.readouterr()
        code = cli.main([*args, "--data-dir", str(site.data)])
        out, err = capsys.readouterr()
        text = f"{code}\n{out}\n{err}"
        site.answers.append(text)
        return text

    failures = []
    for session in ("trip", "Trip", "../trip", f"{site.victim_id}:session:trip", "trip\u200b"):
        for args in (("search", "harbour gate code word", "--key", site.attacker, "--session", session),
                     ("forget", *site.message_ids, "--key", site.attacker, "--session", session)):
            text = run(*args)
            if _shows_nothing_of_the_victims(text) or '"forgotten": ["' in text:
                failures.append(f"{args[0]} in {session!r}: {text[:200]}")
    for args in (("export", "--key", site.attacker), ("stats", "--key", site.attacker),
                 ("forget", *site.message_ids, "--key", site.attacker),
                 ("search", "harbour gate code word", "--key", site.victim_id),
                 ("search", "harbour gate code word", "--key", site.revoked),
                 ("export", "--key", site.brain)):
        text = run(*args)
        if _shows_nothing_of_the_victims(text) or '"forgotten": ["' in text:
            failures.append(f"{args[0]}: {text[:300]}")
    line = json.dumps({"role": "user", "content": INTRUDER, "vault": "session:trip", "id": site.message_ids[1]})
    imported = run("import", "-", "--key", site.attacker, "--session", "trip", stdin=line + "\n")
    assert '"messages_accepted": 1' in imported, imported
    assert not failures, "\n".join(failures)
    _victims_memory_is_intact(site)


def _same_refusal(first: httpx.Response, second: httpx.Response, *names: tuple[str, str]) -> str | None:
    """Why ``first`` and ``second`` tell their callers apart (None if they do not): status, shape
    and message, once each name the other answer gives is put in its place."""
    text = first.text
    for mine, theirs in names:
        text = text.replace(mine, theirs)
    if first.status_code != second.status_code or text != second.text:
        return f"{first.status_code} {first.text[:200]} | {second.status_code} {second.text[:200]}"
    return None


def test_what_is_anothers_and_what_never_was_are_answered_alike(site: Site) -> None:
    never = "mem-" + "0" * 16
    never_proposal = "sprop-" + "0" * (len(site.proposal_id) - len("sprop-"))
    pairs: dict[str, tuple[httpx.Response, httpx.Response, tuple[tuple[str, str], ...]]] = {}
    for holder, secret in (("key", site.attacker), ("credential", site.brain)):
        pairs[f"walled skill ({holder})"] = (
            site.call("GET", f"/v1/brain/skills/{SKILL}", secret), site.call("GET", "/v1/brain/skills/never-was", secret),
            ((SKILL, "never-was"),))
        pairs[f"walled skill by its scope ({holder})"] = (
            site.call("GET", f"/v1/brain/skills/{SKILL}", secret, params={"scope": "family"}),
            site.call("GET", "/v1/brain/skills/never-was", secret, params={"scope": "family"}), ((SKILL, "never-was"),))
        pairs[f"walled skill, kept path ({holder})"] = (
            site.call("GET", "/memory/skill", secret, params={"slug": SKILL}),
            site.call("GET", "/memory/skill", secret, params={"slug": "never-was"}), ((SKILL, "never-was"),))
        for action in ("confirm", "reject"):
            pairs[f"{action} a walled skill proposal ({holder})"] = (
                site.call("POST", f"/v1/brain/skills/proposals/{site.proposal_id}/{action}", secret, json={}),
                site.call("POST", f"/v1/brain/skills/proposals/{never_proposal}/{action}", secret, json={}),
                ((site.proposal_id, never_proposal),))
        for kept in ("body", "history"):
            pairs[f"walled fact, kept {kept} path ({holder})"] = (
                site.call("GET", f"/memory/{kept}", secret, params={"id": site.fact_id}),
                site.call("GET", f"/memory/{kept}", secret, params={"id": never}), ((site.fact_id, never),))
    unknown = "mk_" + secrets.token_urlsafe(32)
    # Each compared with an unknown token of its own shape: the shape is the caller's to see.
    for name, secret, nobody_like in (
            ("a revoked memory key", site.revoked, unknown), ("a brain credential", site.brain, "bt_" + "x" * 43),
            ("the victim's key id", site.victim_id, "key_" + "0" * 16),
            ("the victim's key in another case", site.victim.upper(), unknown.upper())):
        pairs[f"{name} as a memory key"] = (site.call("GET", "/v1/memory", secret),
                                            site.call("GET", "/v1/memory", nobody_like), ())
    pairs["a revoked memory key on the brain"] = (
        site.call("POST", "/v1/brain/recall", site.revoked, json={"query": "x"}),
        site.call("POST", "/v1/brain/recall", unknown, json={"query": "x"}), ())
    pairs["a revoked key on the router"] = (
        site.call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", site.revoked)], json={
            "model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        site.call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", unknown)], json={
            "model": "m", "messages": [{"role": "user", "content": "hi"}]}), ())
    pairs["a revoked key over MCP"] = (
        httpx.Response(200, text=site.mcp(site.revoked, "memory_search", {"query": "x"})),
        httpx.Response(200, text=site.mcp(unknown, "memory_search", {"query": "x"})), ())
    pairs["the victim's message ids forgotten"] = (
        site.call("POST", "/v1/memory/forget", site.attacker, json={"ids": site.message_ids[:1]}),
        site.call("POST", "/v1/memory/forget", site.attacker, json={"ids": ["never-was"]}),
        ((site.message_ids[0], "never-was"),))
    # The admin's routes for memory keys, given a brain credential's id, answer as for no key at all.
    nobody = "key_" + "0" * 16
    for method, template, body in (("GET", "/v1/admin/keys/{}/limits", None), ("PUT", "/v1/admin/keys/{}/limits", {}),
                                   ("GET", "/v1/admin/keys/{}/providers", None),
                                   ("PUT", "/v1/admin/keys/{}/providers/openai", {"api_key": PROVIDER_KEY}),
                                   ("DELETE", "/v1/admin/keys/{}/providers/openai", None),
                                   ("DELETE", "/v1/admin/keys/{}", None)):
        for name, other in (("a brain credential's id", site.brain_id), ("a revoked key's id", site.revoked_id)):
            pairs[f"{method} {template} with {name}"] = (
                site.call(method, template.format(other), ADMIN, json=body),
                site.call(method, template.format(nobody), ADMIN, json=body), ((other, nobody),))
    pairs["a memory key revoked as a brain credential"] = (
        site.call("DELETE", f"/v1/admin/credentials/{site.attacker_id}", ADMIN),
        site.call("DELETE", f"/v1/admin/credentials/{nobody}", ADMIN), ((site.attacker_id, nobody),))
    told = {name: why for name, (first, second, names) in pairs.items() if (why := _same_refusal(first, second, *names))}
    leaked = {name: first.text[:200] for name, (first, _, _) in pairs.items() if _shows_nothing_of_the_victims(first.text)}
    assert not told and not leaked, "\n".join(f"{name}: {why}" for name, why in {**told, **leaked}.items())
    # The admin's mistakes above changed nothing.
    assert site.call("GET", "/v1/memory", site.attacker).status_code == 200
    assert site.call("POST", "/v1/brain/recall", site.brain, json={"query": "x"}).status_code == 200
    _victims_memory_is_intact(site)


def _attackers_calls(site: Site) -> int:
    rows = site.call("GET", "/v1/admin/usage", ADMIN, params={"group_by": "key"}).json()["rows"]
    return next((int(row["calls"]) for row in rows if row["key_id"] == site.attacker_id), 0)


def test_usage_limits_receipts_stats_and_provider_keys_are_each_keys_own(site: Site) -> None:
    before, calls_before = len(Upstream.keys), _attackers_calls(site)
    routed = site.call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", site.attacker)],
                       json={"model": "m", "messages": [{"role": "user", "content": "What is the harbour gate code?"}]})
    for session in ("trip", "Trip", "../trip", f"{site.victim_id}:session:trip"):
        for brain in ("on", "off"):
            again = site.call("POST", "/v1/chat/completions", json={"model": "m", "messages": [
                {"role": "user", "content": "What is the harbour gate code word, and where does the safe key hang?"}]},
                headers=[("X-Memory-Key", site.attacker), ("X-Session-ID", quote(session)), ("X-Memory-Brain", brain)])
            assert again.status_code < 500, again.text
    # The attacker stored no provider key and sent none: nothing is forwarded with the victim's, nor
    # with the victim's memory or facts injected.
    assert f"Bearer {PROVIDER_KEY}" not in Upstream.keys[before:], Upstream.keys[before:]
    assert routed.status_code < 500, routed.text
    assert len(Upstream.bodies) > before
    assert not [body for body in Upstream.bodies[before:] if _shows_nothing_of_the_victims(body.decode())]
    # A routed call's usage is settled just after its answer went out: the reads below compare the
    # admin's view and the key's own once every call forwarded above is counted.
    deadline = time.monotonic() + 30
    while _attackers_calls(site) < calls_before + len(Upstream.keys) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    by_key = site.call("GET", "/v1/admin/usage", ADMIN, params={"group_by": "key"}).json()["rows"]
    own = next({**row, "key_id": None} for row in by_key if row["key_id"] == site.attacker_id)
    for params in ({}, {"group_by": "key"}, {"key": site.victim_id}, {"key_id": site.victim_id}, {"id": site.victim_id}):
        usage = site.call("GET", "/v1/usage", site.attacker, params=params)
        assert usage.status_code in (200, 422), usage.text
        if usage.status_code == 200:
            assert usage.json()["rows"] == [{**own, "day": usage.json()["rows"][0]["day"]}], (usage.text, by_key)
    receipts = site.call("GET", "/v1/memory/receipts", site.attacker)
    assert receipts.status_code == 200 and site.receipt not in receipts.text, receipts.text
    for path in (f"/v1/memory/receipts/{site.receipt}", f"/v1/memory/receipts/{site.receipt.upper()}",
                 f"/v1/memory/receipts/{site.receipt}/", f"/v1/memory/receipts/{quote(site.receipt + '/../x')}",
                 f"/v1/memory/receipts?id={site.receipt}"):
        answer = site.call("GET", path, site.attacker)
        assert not _shows_nothing_of_the_victims(answer.text) and '"key_id"' not in answer.text, (path, answer.text)
    stats = site.call("GET", "/v1/memory/stats", site.attacker)
    assert stats.status_code == 200 and stats.json()["key_id"] == site.attacker_id, stats.text
    assert not _shows_nothing_of_the_victims(stats.text), stats.text
    me = site.call("GET", "/portal/me", site.attacker).json()
    assert me == {"kind": "memory", "id": site.attacker_id, "name": "attacker"}, me


def test_every_read_of_the_brain_stops_at_the_wall_on_its_kept_paths_too(site: Site) -> None:
    failures = []
    for secret in (site.attacker, site.brain):
        for method, path, params, body in (
                ("POST", "/v1/brain/facts/search", None, {"query": "lighthouse painting", "scope": "family"}),
                ("POST", "/v1/brain/facts/search", None, {"query": "lighthouse painting", "scopes": ["family"]}),
                ("POST", "/v1/brain/recall", None, {"query": "lighthouse painting", "scope": "family"}),
                ("GET", "/v1/brain/export", {"scope": "family"}, None),
                ("GET", "/v1/brain/skills", {"scope": "family"}, None),
                ("GET", "/v1/brain/skills/proposals", {"scope": "family", "status": "pending"}, None),
                ("GET", "/v1/brain/proposals", {"scope": "family"}, None),
                ("POST", "/v1/brain/consolidate", None, {"scope": "family", "dry_run": True}),
                ("GET", "/memory/search", {"q": "lighthouse painting", "scope": "family"}, None),
                ("GET", "/recall", {"q": "lighthouse painting", "scope": "family"}, None),
                ("GET", "/memory/export", {"scope": "family"}, None),
                ("GET", "/memory/skill", {"scope": "family"}, None),
                ("GET", "/memory/proposals", {"scope": "family"}, None),
                ("POST", "/memory/consolidate", None, {"scope": "family", "dryRun": True}),
                ("GET", "/portal/me", None, None)):
            answer = site.call(method, path, secret, params=params, json=body)
            leaked = _shows_nothing_of_the_victims(answer.text)
            if answer.status_code >= 500 or leaked or '"family"' in answer.text:
                failures.append(f"{method} {path} {params or body}: {answer.status_code} {answer.text[:200]}")
    assert not failures, "\n".join(failures)


def test_mcp_over_http_answers_only_a_post_at_its_own_path(site: Site) -> None:
    for method in ("GET", "HEAD", "OPTIONS", "DELETE", "PUT"):
        for path in ("/mcp", "/mcp/", "/MCP", "//mcp"):
            status, text = site.raw(method, path, {"X-Memory-Key": site.attacker, "Accept": MCP_ACCEPT[1]})
            assert not 200 <= status < 300 and not _shows_nothing_of_the_victims(text), (method, path, status, text)
    listed = {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": {}}
    for secret in (site.attacker, site.brain):
        answer = site.call("POST", "/mcp", secret, headers=[MCP_ACCEPT], json=listed)
        assert not _shows_nothing_of_the_victims(answer.text) and site.fact_id not in answer.text, answer.text


def test_a_cached_answer_is_never_another_callers(site: Site) -> None:
    """The read cache keeps answers by what was asked: the victim's, asked again in the same words
    by another caller, must not be it."""
    search = {"query": "what is the harbour gate code word", "session_id": "trip", "budget_tokens": 300}
    recall = {"query": "where does the family safe key hang"}
    for _ in range(2):
        assert "PELICAN" in site.call("POST", "/v1/memory/search", site.victim, keep=False, json=search).text
        assert "lighthouse" in site.call("POST", "/v1/brain/recall", site.victim, keep=False, json=recall).text
        assert "lighthouse" in site.call("POST", "/v1/brain/facts/search", site.victim, keep=False, json=recall).text
    before = site.call("GET", "/v1/memory/stats", site.attacker).json()["cache"]
    answers = [site.call("POST", "/v1/memory/search", site.attacker, json=search),
               site.call("POST", "/v1/memory/search", site.attacker, headers=[("X-Session-ID", "trip")],
                         json={"query": search["query"], "budget_tokens": 301}),
               *[site.call("POST", path, secret, json=recall) for secret in (site.attacker, site.brain)
                 for path in ("/v1/brain/recall", "/v1/brain/facts/search")]]
    assert not [answer.text for answer in answers if _shows_nothing_of_the_victims(answer.text)]
    # The attacker's own two searches, each asked once; the victim's hits are not shown to it.
    after = site.call("GET", "/v1/memory/stats", site.attacker).json()["cache"]
    assert (after["hits"] - before["hits"], after["misses"] - before["misses"]) == (0, 2), (before, after)


def test_no_secret_appears_in_any_answer_document_page_or_log_line(site: Site) -> None:
    # Secrets handed where an id or a name goes: an answer may repeat them to the caller who sent
    # them (forget lists the ids it did not find), no log line may.
    call = functools.partial(site.call, keep=False)
    for secret in (site.victim, ADMIN, PROVIDER_KEY):
        call("GET", f"/v1/memory/receipts/{secret}", site.attacker)
        call("GET", "/v1/memory", site.attacker, params={"session_id": secret})
        call("POST", "/v1/memory/search", site.attacker, json={"query": "x", "session_id": secret})
        call("DELETE", f"/v1/memory/{secret}", site.attacker)
        call("GET", f"/v1/brain/facts/{secret}/body", site.brain)
        call("GET", f"/v1/brain/skills/{secret}", site.brain)
        call("GET", "/v1/memory", secret)
        call("GET", "/v1/memory", headers=[("X-Memory-Key", secret)])
        call("POST", "/v1/brain/recall", secret, json={"query": secret})
        call("GET", f"/v1/admin/keys/{secret}/limits", ADMIN)
        call("GET", f"/v1/admin/keys/{secret}/limits", secret)
        call("GET", "/v1/usage", site.attacker, params={"from": secret})
        call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", secret), ("X-Session-ID", secret)],
             json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        call("POST", "/mcp", headers=[("X-Memory-Key", secret), MCP_ACCEPT], json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "x", "session_id": secret}}})
        call("POST", "/v1/brain/facts", site.brain, json={"source": secret, "scope": "business", "content": "x"})
        call("POST", "/v1/brain/facts", site.brain, json={"source": "s", "scope": secret, "content": "x"})
    documents = {
        "openapi": site.call("GET", "/openapi.json").text,
        "docs": site.call("GET", "/docs").text,
        "portal": site.call("GET", "/portal").text,
        **{name: site.call("GET", f"/portal/static/{name}").text for name in ("portal.js", "session.js")},
        "health": site.call("GET", "/health").text,
    }
    traversal = [site.raw("GET", path, {}) for path in (
        "/portal/static/..%2F__init__.py", "/portal/static/%2E%2E/__init__.py", "/portal/static/../__init__.py",
        "/portal/static/..%5C__init__.py", "/portal/static/index.html%00.js")]
    assert not [text for status, text in traversal if status == 200 or "import" in text], traversal
    places = {**documents, **{f"answer {n}": text for n, text in enumerate(site.answers)}, "log": _logged(site, "%00.js")}
    found = [(place, kind, text[max(0, text.index(secret) - 120):text.index(secret) + 20])
             for place, text in places.items() for kind, secret in site.held_secrets().items() if secret in text]
    assert not found, "\n".join(map(repr, found))


def _logged(site: Site, last: str) -> str:
    """What the server logged, once the line of the request whose path ends with ``last`` is there."""
    deadline = time.monotonic() + 30
    while last not in (log := site.log.read_text(errors="replace")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert last in log, log[-2000:]
    return log


def test_an_admin_route_given_a_secret_for_an_id_does_not_repeat_it(site: Site) -> None:
    """A key's secret pasted where its id goes (`memvault keys revoke mk_…`) is refused, never
    repeated in the answer's "no active key …", which a terminal or a CI log keeps."""
    for secret in (site.victim, site.brain):
        for method, path, body in (("DELETE", "/v1/admin/keys/{}", None), ("DELETE", "/v1/admin/credentials/{}", None),
                                   ("GET", "/v1/admin/keys/{}/limits", None), ("PUT", "/v1/admin/keys/{}/limits", {}),
                                   ("GET", "/v1/admin/keys/{}/providers", None),
                                   ("PUT", "/v1/admin/keys/{}/providers/openai", {"api_key": "sk-" + "a1B2" * 10}),
                                   ("DELETE", "/v1/admin/keys/{}/providers/openai", None)):
            answer = site.call(method, path.format(secret), ADMIN, keep=False, json=body)
            assert answer.status_code == 422 and secret not in answer.text, (method, path, answer.text)
    assert site.call("GET", "/v1/memory", site.victim).status_code == 200

"""How a client reaches memvault: over a service binding (RPC, from another Worker) or over HTTP
(apps outside Cloudflare, local runs). Both answer with memvault's results as they are (the same on
every surface, ``core/memory/results.py``), so nothing above them knows which one it has:

- a page: ``{session_id, offset, limit, items}`` (newest first);
- a save: ``{message_ids, messages_accepted, messages_stored, chunks_stored, tokens_buffered,
  updated_at, redactions, mirrored}``;
- a search: ``{items, tokens, metrics, facts, receipt}``, the items best first (``facts``: a key
  granted brain scopes gets its brain facts there; ``receipt``: the id of what the search returned).

Failures arrive as memvault's domain errors (``memvault.core.errors``), whichever transport
carried them, so one predicate tells a passing failure from a refusal."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from memvault.core.errors import RateLimited, Unauthorized, UpstreamUnavailable, error_for_status
from memvault.core.ports import HttpClient

SKILL_PROPOSALS = "/v1/brain/skills/proposals"


class Transport(Protocol):
    async def get_memory(self, session_id: str | None, limit: int | None, offset: int) -> dict[str, Any]: ...

    async def save_memory(
        self, session_id: str | None, messages: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any] | None
    ) -> dict[str, Any]: ...

    async def search_memory(self, query: str, limit: int | None, session_id: str | None) -> dict[str, Any]: ...

    async def write_facts(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """A brain write with the bot's credential."""
        ...

    async def search_facts(self, query: str, limit: int | None) -> list[dict[str, Any]]:
        """A keyword search of the brain with the bot's credential."""
        ...

    async def register_skill(self, skill: Mapping[str, Any]) -> dict[str, Any]: ...

    async def propose_skill(self, proposal: Mapping[str, Any]) -> dict[str, Any]: ...

    async def skill_proposals(self, status: str | None, limit: int | None) -> dict[str, Any]: ...

    async def confirm_skill_proposal(self, proposal_id: str, version_of: str | None) -> dict[str, Any]: ...

    async def reject_skill_proposal(self, proposal_id: str, reason: str | None) -> dict[str, Any]: ...

    async def retire_fact(self, fact_id: str, reason: str) -> dict[str, Any]:
        """Retire a brain fact by hand with the bot's credential."""
        ...


class RpcCaller(Protocol):
    """Calls one RPC method of memvault's entrypoint with plain data and returns plain data
    (``memvault.adapters.cloudflare.rpc_stub.RpcStub`` over the service binding, on Workers)."""

    async def call(self, method: str, *args: Any) -> Any: ...


def _without_none(options: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


class RpcTransport:
    """The service binding: the memory key is the one the binding's props name; the brain token,
    if the bot has one, travels with each brain call."""

    def __init__(self, caller: RpcCaller, brain_token: str | None = None) -> None:
        self._caller = caller
        self._brain_token = brain_token

    async def get_memory(self, session_id: str | None, limit: int | None, offset: int) -> dict[str, Any]:
        page: dict[str, Any] = await self._caller.call("getMemory", session_id, _without_none({"limit": limit, "offset": offset}))
        return page

    async def save_memory(
        self, session_id: str | None, messages: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        ack: dict[str, Any] = await self._caller.call("saveMemory", session_id, list(messages), metadata)
        return ack

    async def search_memory(self, query: str, limit: int | None, session_id: str | None) -> dict[str, Any]:
        found: dict[str, Any] = await self._caller.call(
            "searchMemory", query, _without_none({"limit": limit, "sessionId": session_id})
        )
        return found

    async def write_facts(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        written: dict[str, Any] = await self._caller.call("brain_write", self._token(), dict(payload))
        return written

    async def search_facts(self, query: str, limit: int | None) -> list[dict[str, Any]]:
        found = await self._caller.call("brain_search", self._token(), query, "keyword", limit)
        return list(found["results"])

    async def register_skill(self, skill: Mapping[str, Any]) -> dict[str, Any]:
        return await self._brain("brain_register_skill", dict(skill))

    async def propose_skill(self, proposal: Mapping[str, Any]) -> dict[str, Any]:
        return await self._brain("brain_propose_skill", dict(proposal))

    async def skill_proposals(self, status: str | None, limit: int | None) -> dict[str, Any]:
        return await self._brain("brain_skill_proposals", status, limit)

    async def confirm_skill_proposal(self, proposal_id: str, version_of: str | None) -> dict[str, Any]:
        return await self._brain("brain_confirm_skill_proposal", proposal_id, version_of)

    async def reject_skill_proposal(self, proposal_id: str, reason: str | None) -> dict[str, Any]:
        return await self._brain("brain_reject_skill_proposal", proposal_id, reason)

    async def _brain(self, method: str, *args: Any) -> dict[str, Any]:
        answer: dict[str, Any] = await self._caller.call(method, self._token(), *args)
        return answer

    async def retire_fact(self, fact_id: str, reason: str) -> dict[str, Any]:
        retired: dict[str, Any] = await self._caller.call("brain_retire", self._token(), fact_id, reason)
        return retired

    def _token(self) -> str:
        if not self._brain_token:
            raise Unauthorized("this client was given no brain credential")
        return self._brain_token


class HttpTransport:
    """memvault's HTTP API through an injected ``HttpClient`` (httpx locally, the Workers fetch on
    Cloudflare); the memory key is this transport's bearer key."""

    def __init__(self, http: HttpClient, base_url: str, memory_key: str, brain_token: str | None = None) -> None:
        self._http = http
        self._base = base_url.rstrip("/")
        self._memory_key = memory_key
        self._brain_token = brain_token

    async def _request(self, method: str, path: str, token: str | None, body: Any = None,
                       headers: Sequence[tuple[str, str]] = ()) -> Any:
        return await request_json(self._http, method, self._base + path, token, body, headers)

    async def get_memory(self, session_id: str | None, limit: int | None, offset: int) -> dict[str, Any]:
        query = urlencode(_without_none({"session_id": session_id, "limit": limit, "offset": offset}))
        page: dict[str, Any] = await self._request("GET", f"/v1/memory?{query}", self._memory_key)
        return page

    async def save_memory(
        self, session_id: str | None, messages: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        headers = [] if session_id is None else [("x-session-id", session_id)]
        body = _without_none({"messages": list(messages), "metadata": metadata})
        stored: dict[str, Any] = await self._request("POST", "/v1/memory", self._memory_key, body, headers)
        return stored

    async def search_memory(self, query: str, limit: int | None, session_id: str | None) -> dict[str, Any]:
        body = _without_none({"query": query, "limit": limit, "session_id": session_id})
        found: dict[str, Any] = await self._request("POST", "/v1/memory/search", self._memory_key, body)
        return found

    async def write_facts(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        written: dict[str, Any] = await self._request("POST", "/v1/brain/facts", self._brain_token, dict(payload))
        return written

    async def search_facts(self, query: str, limit: int | None) -> list[dict[str, Any]]:
        body = _without_none({"query": query, "mode": "keyword", "limit": limit})
        found = await self._request("POST", "/v1/brain/facts/search", self._brain_token, body)
        return list(found["results"])

    async def register_skill(self, skill: Mapping[str, Any]) -> dict[str, Any]:
        return await self._brain("POST", "/v1/brain/skills", dict(skill))

    async def propose_skill(self, proposal: Mapping[str, Any]) -> dict[str, Any]:
        return await self._brain("POST", SKILL_PROPOSALS, dict(proposal))

    async def skill_proposals(self, status: str | None, limit: int | None) -> dict[str, Any]:
        query = urlencode(_without_none({"status": status, "limit": limit}))
        return await self._brain("GET", f"{SKILL_PROPOSALS}?{query}")

    async def confirm_skill_proposal(self, proposal_id: str, version_of: str | None) -> dict[str, Any]:
        path = f"{SKILL_PROPOSALS}/{quote(proposal_id, safe='')}/confirm"
        return await self._brain("POST", path, _without_none({"version_of": version_of}))

    async def reject_skill_proposal(self, proposal_id: str, reason: str | None) -> dict[str, Any]:
        path = f"{SKILL_PROPOSALS}/{quote(proposal_id, safe='')}/reject"
        return await self._brain("POST", path, _without_none({"reason": reason}))

    async def _brain(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        answer: dict[str, Any] = await self._request(method, path, self._brain_token, body)
        return answer

    async def retire_fact(self, fact_id: str, reason: str) -> dict[str, Any]:
        path = f"/v1/brain/facts/{quote(fact_id, safe='')}/retire"
        retired: dict[str, Any] = await self._request("POST", path, self._brain_token, {"reason": reason})
        return retired


async def request_json(http: HttpClient, method: str, url: str, token: str | None, body: Any = None,
                       headers: Sequence[tuple[str, str]] = ()) -> Any:
    """One call of memvault's HTTP API with ``token`` as its bearer: the JSON answer, or the domain
    error memvault's error envelope names."""
    if not token:
        raise Unauthorized("this client was given no credential for that call")
    sent = [("authorization", f"Bearer {token}"), ("accept", "application/json"), *headers]
    data = b""
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        sent.append(("content-type", "application/json"))
    response = await http.send(method, url, sent, data)
    try:
        raw = b"".join([chunk async for chunk in response.aiter_bytes()])
    finally:
        await response.aclose()
    if response.status >= 400:
        message = _error_message(raw)
        if message is None:
            # Not memvault's own answer (a proxy, a server that could not read the request):
            # nothing was refused on its merits, so the call may pass when it is sent again.
            raise UpstreamUnavailable(f"memvault's address answered {response.status} without memvault's error body")
        error = error_for_status(response.status, message)
        if isinstance(error, RateLimited):
            error.retry_after = _retry_after(response.headers, error.retry_after)
        raise error
    return json.loads(raw) if raw else None


def _retry_after(headers: Sequence[tuple[str, str]], default: int) -> int:
    """The whole seconds a 429's ``Retry-After`` asks the caller to wait (memvault sends seconds)."""
    for name, value in headers:
        if name.lower() == "retry-after" and value.strip().isdigit():
            return max(1, int(value.strip()))
    return default


def _error_message(raw: bytes) -> str | None:
    """The message of memvault's error envelope; None when the body is not one."""
    try:
        message = json.loads(raw)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None
    return str(message)

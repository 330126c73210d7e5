"""The brain over its HTTP API, as the folder sync uses it. A refusal of one request (a 4xx other
than 401) is ``Refused`` and concerns one file; anything that means the brain cannot be used now
(unreachable, a 5xx, the credential rejected) is ``Unavailable`` and stops the run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

NOTE_SOURCE = "files:"


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class Unavailable(Exception):
    pass


@dataclass(frozen=True)
class BrainNote:
    """The current fact of a note (source ``files:<path>``) as the export shows it."""

    path: str
    text: str
    content_hash: str
    scope: str
    entry_type: str


def _message(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
        if "detail" in data:
            return str(data["detail"])
    return response.text[:300]


class Brain:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self.client.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise Unavailable(f"the brain could not be reached: {error!r}") from error
        if response.status_code == 401 or response.status_code >= 500:
            raise Unavailable(f"the brain answered {response.status_code}: {_message(response)}")
        if response.status_code >= 400:
            raise Refused(response.status_code, _message(response))
        return response

    async def notes(self) -> tuple[dict[str, BrainNote], set[tuple[str, str]]]:
        """The current note of each file (by ``files:`` source, the prefix taken off), and each
        retired version the credential can see, as (path, content hash)."""
        response = await self._call("GET", "/v1/brain/export", params={"source_prefix": NOTE_SOURCE})
        current: dict[str, BrainNote] = {}
        retired: set[tuple[str, str]] = set()
        for line in response.text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            path = str(row["source"])[len(NOTE_SOURCE):]
            if not row.get("current"):
                retired.add((path, str(row["content_hash"])))
                continue
            current[path] = BrainNote(path, row.get("body") or row["content"], str(row["content_hash"]),
                                        str(row["scope"]), str(row["entry_type"]))
        return current, retired

    async def write_note(self, relative: str, text: str, scope: str, entry_type: str) -> tuple[str, bool]:
        """Store ``text`` as the one current fact of the file: the brain's content hash of what it
        stored, and whether the secret gate redacted something."""
        body = {"source": NOTE_SOURCE + relative, "scope": scope, "entry_type": entry_type, "reconcile": True,
                "bands": False, "facts": [{"content": text}]}
        written = (await self._call("POST", "/v1/brain/facts", json=body)).json()
        (fact_id,) = written["ids"]
        stored = (await self._call("GET", f"/v1/brain/facts/{fact_id}/body")).json()
        return str(stored["content_hash"]), bool(written["redacted"])

    async def retire_note(self, relative: str) -> None:
        await self._call("POST", "/v1/brain/facts", json={"source": NOTE_SOURCE + relative, "reconcile": True,
                                                           "bands": False, "facts": []})

    async def skills(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = (await self._call("GET", "/v1/brain/skills")).json()["skills"]
        return listed

    async def skill(self, slug: str, scope: str) -> dict[str, Any]:
        found = (await self._call("GET", f"/v1/brain/skills/{slug}", params={"scope": scope})).json()
        skill: dict[str, Any] = found["skill"]
        return skill

    async def send_skill(self, skill: dict[str, str]) -> dict[str, Any]:
        registered: dict[str, Any] = (await self._call("POST", "/v1/brain/skills", json=skill)).json()
        return registered

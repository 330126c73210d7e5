"""The admin surface of a deployed memvault over HTTP, for the CLI's `--url`: each admin operation
by its name (``memvault.core.admin``) and its plain data, answered with its result as the Worker
sends it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from memvault.client.transports import request_json
from memvault.core.errors import InvalidInput
from memvault.core.ports import HttpClient

# operation name -> (method, path under /v1/admin; "{id}" from the data, the rest the body)
ROUTES: Mapping[str, tuple[str, str]] = {
    "create_key": ("POST", "/keys"),
    "list_keys": ("GET", "/keys"),
    "revoke_key": ("DELETE", "/keys/{id}"),
    "create_credential": ("POST", "/credentials"),
    "list_credentials": ("GET", "/credentials"),
    "revoke_credential": ("DELETE", "/credentials/{id}"),
    "admin_usage": ("GET", "/usage"),
    "get_limits": ("GET", "/keys/{id}/limits"),
    "set_limits": ("PUT", "/keys/{id}/limits"),
}


class AdminClient:
    def __init__(self, http: HttpClient, base_url: str, admin_token: str) -> None:
        self._http = http
        self._base = base_url.rstrip("/") + "/v1/admin"
        self._token = admin_token

    async def call(self, operation: str, data: Mapping[str, Any]) -> dict[str, Any]:
        method, path = ROUTES[operation]
        if "{id}" in path:
            key_id = data.get("id")
            if not isinstance(key_id, str) or not key_id:
                raise InvalidInput("an id is required")
            path = path.replace("{id}", quote(key_id, safe=""))
        rest = {name: value for name, value in data.items() if name != "id"}
        body = dict(data) if method == "POST" else rest if method == "PUT" else None
        query = {name: value for name, value in rest.items() if value is not None}
        if method == "GET" and query:
            path += "?" + urlencode(query)
        answer: dict[str, Any] = await request_json(self._http, method, self._base + path, self._token, body)
        return answer

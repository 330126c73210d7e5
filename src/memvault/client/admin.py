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

# operation name -> (method, path under /v1/admin; "{field}"s from the data). A POST sends the
# rest of the data as its body, a PUT the data's "body".
ROUTES: Mapping[str, tuple[str, str]] = {
    "create_key": ("POST", "/keys"),
    "list_keys": ("GET", "/keys"),
    "revoke_key": ("DELETE", "/keys/{id}"),
    "create_credential": ("POST", "/credentials"),
    "list_credentials": ("GET", "/credentials"),
    "revoke_credential": ("DELETE", "/credentials/{id}"),
    "set_provider_key": ("PUT", "/keys/{id}/providers/{provider}"),
    "delete_provider_key": ("DELETE", "/keys/{id}/providers/{provider}"),
    "list_provider_keys": ("GET", "/keys/{id}/providers"),
    "reseal_provider_keys": ("POST", "/provider-keys/reseal"),
    "admin_usage": ("GET", "/usage"),
    "get_limits": ("GET", "/keys/{id}/limits"),
    "set_limits": ("PUT", "/keys/{id}/limits"),
}
_PATH_FIELDS = ("id", "provider")


class AdminClient:
    def __init__(self, http: HttpClient, base_url: str, admin_token: str) -> None:
        self._http = http
        self._base = base_url.rstrip("/") + "/v1/admin"
        self._token = admin_token

    async def call(self, operation: str, data: Mapping[str, Any]) -> dict[str, Any]:
        method, path = ROUTES[operation]
        for name in _PATH_FIELDS:
            if "{" + name + "}" in path:
                value = data.get(name)
                if not isinstance(value, str) or not value:
                    raise InvalidInput(f"{'an' if name == 'id' else 'a'} {name} is required")
                path = path.replace("{" + name + "}", quote(value, safe=""))
        rest = {name: value for name, value in data.items() if name not in _PATH_FIELDS}
        body = dict(data) if method == "POST" else data.get("body", rest) if method == "PUT" else None
        query = {name: value for name, value in rest.items() if value is not None}
        if method == "GET" and query:
            path += "?" + urlencode(query)
        answer: dict[str, Any] = await request_json(self._http, method, self._base + path, self._token, body)
        return answer

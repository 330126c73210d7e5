"""``HttpClient`` over the Workers ``fetch``; the response body is read chunk by chunk from its
stream, so a streamed upstream answer is passed on as it arrives. A fetch that fails, or a body cut
off, is ``UpstreamUnavailable`` as with the local client, so the caller gets the same 502 in its
provider's envelope."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import js
from pyodide.ffi import JsException

from memvault.adapters.cloudflare.convert import bytes_of, is_missing, js_bytes, to_js, to_py
from memvault.core.errors import UpstreamUnavailable


def _kind(exc: JsException) -> str:
    # The JS error's name only: its message may hold the URL, and a URL may carry a provider key
    # (Gemini's ?key=).
    return str(getattr(exc, "name", None) or type(exc).__name__)


class FetchResponse:
    def __init__(self, response: Any) -> None:
        self._response = response
        self._reader: Any = None
        self._closed = False

    @property
    def status(self) -> int:
        return int(self._response.status)

    @property
    def headers(self) -> list[tuple[str, str]]:
        pairs = to_py(getattr(js.Array, "from")(self._response.headers.entries())) or []
        return [(str(k), str(v)) for k, v in pairs]

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        body = self._response.body
        if self._closed or is_missing(body):
            return
        self._reader = body.getReader()
        while True:
            try:
                chunk = await self._reader.read()
            except JsException as exc:
                raise UpstreamUnavailable(f"upstream body interrupted: {_kind(exc)}") from exc
            if chunk.done:
                break
            data = bytes_of(chunk.value)
            if data:
                yield data
        self._closed = True

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Cancelling tells the upstream we stopped reading (a client went away mid-stream).
        if self._reader is not None:
            await self._reader.cancel()
        elif not is_missing(self._response.body):
            await self._response.body.cancel()


class FetchHttpClient:
    def __init__(self, fetch: Any = None) -> None:
        # Injectable for a service binding's ``fetch``; the global one by default.
        self._fetch = fetch if fetch is not None else js.fetch

    async def send(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> FetchResponse:
        init: dict[str, Any] = {"method": method, "headers": [[k, v] for k, v in headers]}
        request = to_js(init)
        if body and method.upper() not in {"GET", "HEAD"}:
            request.body = js_bytes(body)
        try:
            return FetchResponse(await self._fetch(url, request))
        except JsException as exc:
            raise UpstreamUnavailable(f"upstream unreachable: {_kind(exc)}") from exc

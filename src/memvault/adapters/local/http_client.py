"""``HttpClient`` over httpx: requests go out as given, responses stream back as they arrive.
It serves the command line's remote calls and callers that hand it an httpx client of their own
(an in-process ASGI transport); the local server relays provider calls with ``relay_client``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import httpx

from memvault.core.errors import UpstreamUnavailable

# Model calls can think for minutes between bytes; connecting should be quick.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
# No cap of the pool's own on calls in flight: the caller bounds them. httpx's default of 100 made
# the 101st concurrent call wait for a free slot and fail as "unreachable" while the rest were answered.
POOL_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=20)


class HttpxResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def headers(self) -> list[tuple[str, str]]:
        return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in self._response.headers.raw]

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            # Decoded (gzip and the like undone) but otherwise the bytes upstream sent, unbuffered.
            async for chunk in self._response.aiter_bytes():
                if chunk:
                    yield chunk
        except httpx.HTTPError as exc:
            raise UpstreamUnavailable(f"upstream body interrupted: {type(exc).__name__}") from exc

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxClient:
    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        # trust_env off: a local proxy variable must not silently reroute provider traffic.
        self._client = client or httpx.AsyncClient(
            timeout=DEFAULT_TIMEOUT, limits=POOL_LIMITS, trust_env=False, follow_redirects=False
        )

    async def send(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> HttpxResponse:
        request = self._client.build_request(method, url, headers=list(headers), content=body or None)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            # The message names the failure kind only: URLs may carry a provider key (Gemini ?key=).
            raise UpstreamUnavailable(f"upstream unreachable: {type(exc).__name__}") from exc
        return HttpxResponse(response)

    async def aclose(self) -> None:
        await self._client.aclose()


"""``HttpClient`` locally: requests go out as given, responses stream back as they arrive.

``AiohttpClient`` relays the provider calls of the local server: its C parser costs a call about a
sixth of the CPU httpx's async client does (0.4 against 3 ms a small call measured on loopback),
and every millisecond of it is added to a routed call's latency. ``HttpxClient`` serves the
command line's remote calls and callers that hand it an httpx client of their own (an in-process
ASGI transport)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import aiohttp
import httpx
from multidict import CIMultiDict
from yarl import URL

from memvault.core.errors import UpstreamUnavailable

# Model calls can think for minutes between bytes; connecting should be quick.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
# No cap of the pool's own on calls in flight: each is the relay of one client connection, and the
# server already bounds those (`server_limits`). httpx's default of 100 made the 101st concurrent
# stream wait for a free slot and fail as "unreachable" while the provider was answering the rest.
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


# The same bounds as DEFAULT_TIMEOUT (aiohttp has no write timeout; `connect` includes the wait
# for a pooled connection).
RELAY_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=30.0, sock_connect=10.0, sock_read=600.0)
KEEPALIVE_SECONDS = 15.0


class AiohttpResponse:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status

    @property
    def headers(self) -> list[tuple[str, str]]:
        return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in self._response.raw_headers]

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            # Decoded (gzip and the like undone) but otherwise the bytes upstream sent, unbuffered.
            async for chunk in self._response.content.iter_any():
                if chunk:
                    yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise UpstreamUnavailable(f"upstream body interrupted: {type(exc).__name__}") from exc

    async def aclose(self) -> None:
        # Back to the pool when the body was read to its end, else the connection is closed.
        self._response.release()


class AiohttpClient:
    """One session per event loop, made on its first call there (a session belongs to its loop)."""

    def __init__(self) -> None:
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            for other in [other for other in self._sessions if other.is_closed()]:
                del self._sessions[other]
            # No pool cap of its own (the server bounds the calls in flight, see POOL_LIMITS); no
            # cookie jar, so a cookie upstream sets on one caller's call never goes out on another's;
            # no proxy from the environment, which must not silently reroute provider traffic.
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEPALIVE_SECONDS)
            session = aiohttp.ClientSession(connector=connector, timeout=RELAY_TIMEOUT, trust_env=False,
                                            cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=True)
            self._sessions[loop] = session
        return session

    async def send(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> AiohttpResponse:
        # Names in one case: the session keeps a name's repeats only when they are spelt alike.
        outgoing = CIMultiDict((name.lower(), value) for name, value in headers)
        try:
            response = await self._session().request(
                method, URL(url, encoded=True), headers=outgoing, data=body or None,
                allow_redirects=False, skip_auto_headers=("Content-Type",),
            )
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            # The message names the failure kind only: URLs may carry a provider key (Gemini ?key=).
            raise UpstreamUnavailable(f"upstream unreachable: {type(exc).__name__}") from exc
        return AiohttpResponse(response)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        session = self._sessions.pop(loop, None)
        if session is not None:
            await session.close()

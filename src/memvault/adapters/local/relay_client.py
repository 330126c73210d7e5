"""``HttpClient`` for the provider calls the local server relays, over aiohttp: its C parser costs
a call about a sixth of the CPU httpx's async client does (0.4 against 3 ms a small call, measured
on loopback), and every millisecond of it is added to a routed call's latency. aiohttp is loaded
by the first call, so the commands that relay nothing start without it."""

from __future__ import annotations

import asyncio
import functools
import select
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from memvault.core.errors import UpstreamUnavailable

if TYPE_CHECKING:
    import aiohttp

# Model calls can think for minutes between bytes; connecting should be quick (``connect`` includes
# the wait for a pooled connection; aiohttp has no write timeout).
CONNECT_SECONDS, SOCKET_CONNECT_SECONDS, READ_SECONDS = 30.0, 10.0, 600.0
KEEPALIVE_SECONDS = 15.0
# Idle connections kept for reuse, over every provider together. The server's descriptor budget
# counts one upstream connection for each client connection it serves; idle ones beyond the calls
# in flight, kept per provider, would be on top of it.
IDLE_CONNECTIONS = 20


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
        import aiohttp

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
        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            for other in [other for other in self._sessions if other.is_closed()]:
                del self._sessions[other]
            # No cap on the calls in flight (the server bounds them), a cap on idle connections; no
            # cookie jar, so a cookie upstream sets on one caller's call never goes out on another's;
            # no proxy from the environment, which must not silently reroute provider traffic.
            connector = _bounded_pool()(limit=0, keepalive_timeout=KEEPALIVE_SECONDS)
            timeout = aiohttp.ClientTimeout(total=None, connect=CONNECT_SECONDS, sock_connect=SOCKET_CONNECT_SECONDS,
                                            sock_read=READ_SECONDS)
            session = aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False,
                                            cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=True)
            self._sessions[loop] = session
        return session

    async def send(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> AiohttpResponse:
        import aiohttp
        from multidict import CIMultiDict
        from yarl import URL

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


@functools.cache
def _bounded_pool() -> type[aiohttp.TCPConnector]:
    """aiohttp's connector keeping at most ``IDLE_CONNECTIONS`` idle connections, the oldest closed
    first (aiohttp caps the connections in use, never the idle ones). Made on first use, with aiohttp."""
    import aiohttp

    class BoundedIdlePool(aiohttp.TCPConnector):
        async def _get(self, key: Any, *args: Any, **kwargs: Any) -> Any:
            while True:
                connection = await super()._get(key, *args, **kwargs)
                if connection is None or not _closed_by_peer(connection.protocol):
                    return connection
                connection.close()

        def _release(self, key: Any, protocol: Any, *args: Any, **kwargs: Any) -> None:
            super()._release(key, protocol, *args, **kwargs)
            idle = sorted(((since, pool_key, held) for pool_key, held_list in self._conns.items()
                           for held, since in held_list), key=lambda entry: entry[0])
            for _, pool_key, held in idle[: max(0, len(idle) - IDLE_CONNECTIONS)]:
                pool = self._conns[pool_key]
                pool.remove(next(entry for entry in pool if entry[0] is held))
                if not pool:
                    del self._conns[pool_key]
                held.close()

    return BoundedIdlePool


def _closed_by_peer(protocol: Any) -> bool:
    """Whether an idle connection has something to read: only its end (or an answer to no request,
    sent before a close) can arrive on it. aiohttp knows of a close only once the event loop has run
    its callback, so a connection the provider closed while the loop was busy would otherwise be
    taken, and the call sent on it would fail although the provider never saw it."""
    transport = protocol.transport if protocol is not None else None
    sock = transport.get_extra_info("socket") if transport is not None else None
    if sock is None:
        return False
    if not hasattr(select, "poll"):  # Windows; select's descriptor cap does not matter there
        return bool(select.select([sock], [], [], 0)[0])
    poller = select.poll()  # no cap on descriptor numbers, unlike select
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))

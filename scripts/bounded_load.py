#!/usr/bin/env python3
"""Load the real local server the way a crowd of tenants does, under an open-file limit, and print
what the process holds before and after: open file descriptors, resident memory (RSS) and vault
files.

The load: N keys each store a message and search; one key stores into M session vaults and reads
each back; another reads M sessions it never wrote; then idle TCP connections and unauthenticated
`GET /mcp` requests pile up while a bystander tenant keeps searching; then the server restarts over
the folder under the same limit.

Usage: scripts/bounded_load.py [--keys 300] [--sessions 600] [--idle 300] [--fd-limit 1024]
       [--embedder minilm|hash] [--quiet-seconds 120]. The test suite runs a short version
       (tests/api/test_bounded_server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

MEMVAULT = Path(sys.executable).with_name("memvault")
READY_SECONDS = 120.0


@dataclass(frozen=True)
class Held:
    """What the server process holds at one moment."""

    fds: int
    rss_mb: float
    vault_files: int


@dataclass
class LoadReport:
    fd_limit: int
    held: dict[str, Held] = field(default_factory=dict)  # by moment, in the order taken
    statuses: Counter[int] = field(default_factory=Counter)  # of the tenants' requests during the load
    bystander_failures: list[str] = field(default_factory=list)  # what went wrong for the tenant under pressure
    mcp_statuses: list[int] = field(default_factory=list)  # of the unauthenticated GET /mcp
    files_made_by_reads: int = 0  # vault files the reads of never-written sessions created
    restarted: bool = False


def environment(data_dir: Path, embedder: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": embedder,
            "MEMVAULT_LOG_LEVEL": "warning", **(extra or {})}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def create_keys(data_dir: Path, count: int) -> list[str]:
    """``count`` memory keys, made in the data folder's database directly (a CLI call each is slow)."""
    from memvault.adapters.local.database import SqliteDatabase
    from memvault.core.credentials.keys import create_key
    from memvault.runtime.local import DATABASE_FILE

    async def create() -> list[str]:
        data_dir.mkdir(parents=True, exist_ok=True)
        db = SqliteDatabase(data_dir / DATABASE_FILE)
        try:
            return [(await create_key(db, f"load-{i}", time.time()))[1] for i in range(count)]
        finally:
            db.close()

    return asyncio.run(create())


def held(pid: int, data_dir: Path) -> Held:
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return Held(fds, round(rss_kb / 1024, 1), vault_files(data_dir))


def vault_files(data_dir: Path) -> int:
    return len(list((data_dir / "vaults").glob("*.sqlite3")))


@contextmanager
def served(data_dir: Path, env: Mapping[str, str], fd_limit: int, stderr: Path) -> Iterator[tuple[str, int]]:
    """``memvault serve`` with RLIMIT_NOFILE at ``fd_limit``; yields its URL and pid once it answers."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with stderr.open("ab") as log:
        process = subprocess.Popen([str(MEMVAULT), "serve", "--port", str(port)], env=dict(env), preexec_fn=limited,
                                   stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while process.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"the server did not start: {stderr.read_text()[-2000:]}")
        yield url, process.pid
        if process.poll() is not None:
            raise RuntimeError(f"the server died: {stderr.read_text()[-2000:]}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def in_parallel(work: Callable[[httpx.Client, int], list[int]], count: int, url: str, concurrency: int) -> Counter[int]:
    """``work(client, i)`` for i in range(count), on ``concurrency`` threads each with its client; the
    statuses answered (0 for a request that got no answer)."""
    statuses: Counter[int] = Counter()
    # A connection of its own for each request: a kept-alive one that the server closes as idle just
    # as a request goes out on it fails that request without the server having refused anything.
    fresh = httpx.Limits(max_keepalive_connections=0)
    clients = [httpx.Client(base_url=url, timeout=60, limits=fresh) for _ in range(concurrency)]

    def one(i: int) -> list[int]:
        try:
            return work(clients[i % concurrency], i)
        except httpx.HTTPError:
            return [0]  # no answer at all

    try:
        with ThreadPoolExecutor(concurrency) as pool:
            for answer in pool.map(one, range(count)):
                statuses.update(answer)
    finally:
        for client in clients:
            client.close()
    return statuses


def key_turn(keys: list[str]) -> Callable[[httpx.Client, int], list[int]]:
    def turn(client: httpx.Client, i: int) -> list[int]:
        auth = {"Authorization": f"Bearer {keys[i]}"}
        message = {"role": "user", "content": f"Tenant {i} keeps the blue lantern in drawer {i}."}
        stored = client.post("/v1/memory", json={"messages": [message]}, headers=auth)
        found = client.post("/v1/memory/search", json={"query": f"where is tenant {i}'s lantern?"}, headers=auth)
        return [stored.status_code, found.status_code]

    return turn


def session_turn(key: str) -> Callable[[httpx.Client, int], list[int]]:
    auth = {"Authorization": f"Bearer {key}"}

    def turn(client: httpx.Client, i: int) -> list[int]:
        message = {"role": "user", "content": f"Session {i} talks about the harbour crane {i}."}
        stored = client.post("/v1/memory", json={"messages": [message]}, headers={**auth, "X-Session-ID": f"s-{i}"})
        read = client.get("/v1/memory", params={"session_id": f"s-{i}"}, headers=auth)
        return [stored.status_code, read.status_code]

    return turn


def unknown_read(key: str) -> Callable[[httpx.Client, int], list[int]]:
    auth = {"Authorization": f"Bearer {key}"}

    def turn(client: httpx.Client, i: int) -> list[int]:
        read = client.get("/v1/memory", params={"session_id": f"never-written-{i}"}, headers=auth)
        return [read.status_code]

    return turn


def bystander_asks(url: str, key: str, rounds: int) -> list[str]:
    """A tenant's searches, each on a new connection; what went wrong, if anything."""
    failures = []
    for _ in range(rounds):
        try:
            response = httpx.post(f"{url}/v1/memory/search", json={"query": "blue lantern drawer"},
                                  headers={"Authorization": f"Bearer {key}"}, timeout=30)
            if response.status_code != 200:
                failures.append(f"status {response.status_code}")
        except httpx.HTTPError as exc:
            failures.append(type(exc).__name__)
    return failures


def pressure(url: str, idle: int, streams: int, stack: ExitStack) -> list[int]:
    """Open ``idle`` TCP connections that never send a byte and ``streams`` unauthenticated
    ``GET /mcp`` requests left unread; all stay open until ``stack`` closes. The GETs' statuses."""
    host, port = url.removeprefix("http://").split(":")
    for _ in range(idle):
        try:
            stack.enter_context(socket.create_connection((host, int(port)), timeout=5))
        except OSError:
            break  # the client ran out first
    statuses = []
    client = stack.enter_context(httpx.Client(base_url=url, timeout=10))
    for _ in range(streams):
        try:
            stream = stack.enter_context(client.stream("GET", "/mcp", headers={"Accept": "text/event-stream"}))
            statuses.append(stream.status_code)
        except httpx.HTTPError:
            statuses.append(0)
    return statuses


def settled(pid: int, data_dir: Path, seconds: float = 10.0) -> Held:
    """What the process holds once it has let go of what the load left (closed sockets leave at once)."""
    deadline = time.monotonic() + seconds
    last = held(pid, data_dir)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = held(pid, data_dir)
        if now.fds >= last.fds:
            return now
        last = now
    return last


def quiet(pid: int, data_dir: Path, baseline: int, seconds: float) -> tuple[float, Held]:
    """How long until the process holds no more descriptors than ``baseline`` (idle vaults are
    closed after a minute), at most ``seconds``; and what it holds then."""
    started = time.monotonic()
    now = held(pid, data_dir)
    while now.fds > baseline and time.monotonic() - started < seconds:
        time.sleep(1.0)
        now = held(pid, data_dir)
    return time.monotonic() - started, now


def run_load(data_dir: Path, keys: int, sessions: int, idle: int, fd_limit: int, embedder: str = "hash",
             concurrency: int = 8, settings: Mapping[str, str] | None = None, quiet_seconds: float = 0.0) -> LoadReport:
    report = LoadReport(fd_limit)
    secrets = create_keys(data_dir, keys + 2)
    tenants, sessions_key, bystander = secrets[:keys], secrets[keys], secrets[keys + 1]
    env = environment(data_dir, embedder, settings)
    stderr = data_dir / "server.log"
    with served(data_dir, env, fd_limit, stderr) as (url, pid):
        report.held["started"] = held(pid, data_dir)
        report.statuses += in_parallel(key_turn(tenants), keys, url, concurrency)
        report.held[f"after {keys} keys stored and searched"] = held(pid, data_dir)
        half = sessions // 2
        report.statuses += in_parallel(session_turn(sessions_key), half, url, concurrency)
        report.held[f"after {half} session vaults"] = held(pid, data_dir)
        report.statuses += in_parallel(lambda c, i: session_turn(sessions_key)(c, i + half), sessions - half, url,
                                       concurrency)
        report.held[f"after {sessions} session vaults"] = held(pid, data_dir)
        before = vault_files(data_dir)
        report.statuses += in_parallel(unknown_read(bystander), sessions, url, concurrency)
        report.files_made_by_reads = vault_files(data_dir) - before
        report.held[f"after {sessions} reads of unknown sessions"] = held(pid, data_dir)
        with ExitStack() as stack:
            report.mcp_statuses = pressure(url, idle, 20, stack)
            report.held[f"with {idle} idle connections and 20 GET /mcp"] = held(pid, data_dir)
            report.bystander_failures = bystander_asks(url, bystander, 5)
        report.held["after the load"] = settled(pid, data_dir)
        if quiet_seconds:
            waited, now = quiet(pid, data_dir, report.held["started"].fds, quiet_seconds)
            report.held[f"{waited:.0f} s after the load"] = now
    with served(data_dir, env, fd_limit, stderr) as (url, pid):
        report.restarted = not bystander_asks(url, bystander, 1)
        report.held["restarted over the folder"] = held(pid, data_dir)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--idle", type=int, default=300, help="idle TCP connections held open at once")
    parser.add_argument("--fd-limit", type=int, default=1024, help="RLIMIT_NOFILE of the server")
    parser.add_argument("--embedder", default="minilm", help="minilm (the product's) or hash")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--quiet-seconds", type=float, default=120.0,
                        help="how long to wait after the load for idle vaults to be closed")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(args.idle + 200, 4096),) * 2)  # this client's own sockets
    with tempfile.TemporaryDirectory() as tmp:
        report = run_load(Path(tmp), args.keys, args.sessions, args.idle, args.fd_limit, args.embedder,
                          args.concurrency, quiet_seconds=args.quiet_seconds)
    print(f"server RLIMIT_NOFILE {report.fd_limit}")
    print(f"{'moment':<48} {'fds':>6} {'RSS MB':>8} {'vault files':>12}")
    for moment, seen in report.held.items():
        print(f"{moment:<48} {seen.fds:>6} {seen.rss_mb:>8} {seen.vault_files:>12}")
    print(f"request statuses during the load: {dict(sorted(report.statuses.items()))} (target: only 200)")
    print(f"vault files made by reads of never-written sessions: {report.files_made_by_reads} (target 0)")
    print(f"unauthenticated GET /mcp statuses: {dict(Counter(report.mcp_statuses))} (target: none 200)")
    print(f"bystander failures under pressure: {report.bystander_failures or 'none'} (target none)")
    print(f"restarted under the limit: {report.restarted} (target True)")
    ok = (set(report.statuses) == {200} and not report.files_made_by_reads and 200 not in report.mcp_statuses
          and not report.bystander_failures and report.restarted)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Latency memvault's memory router adds over calling the provider directly.

A fake upstream (the one the provider tests use) and a local memvault server run as separate
processes on 127.0.0.1; the memory key already holds some conversation. Each round sends the same
OpenAI chat request once straight to the fake and once through memvault, and records the time to
the whole response (non-streaming) and to the first body byte (streaming). The difference is
key check + retrieval + injection + forwarding; storing a turn happens after the answer is
relayed, and by default measured rounds store nothing so every round recalls from the same state
(`--store` keeps storing, memory then grows by one turn per round).

    .venv/bin/python scripts/bench_router.py                      # hash embedder, 200 rounds
    .venv/bin/python scripts/bench_router.py --embedder minilm    # the real local embedder
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "api" / "providers"))

from bench_common import p50_p95  # noqa: E402

SEED = [
    "I moved to Porto last spring and work at a bike shop near Bolhão.",
    "My daughter Inês starts school in September; she loves drawing owls.",
    "I am allergic to peanuts, so please never suggest satay.",
    "Our team ships the billing service on Thursdays after the 10:00 stand-up.",
    "My favourite book is The Left Hand of Darkness.",
]
QUESTION = "Remind me: what does my daughter like to draw, and when does she start school?"
PAUSE = 0.1  # between rounds, so a background store (embedding included) is not measured


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(role: str, port: int, env: dict[str, str]) -> Iterator[str]:
    """Run this script as a server process (``--serve ROLE``) until the block ends."""
    command = [sys.executable, __file__, "--serve", role, "--port", str(port)]
    process = subprocess.Popen(command, env={**os.environ, **env})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/ready-probe", timeout=1, trust_env=False)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{role} server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def run_server(role: str, port: int) -> None:
    import uvicorn

    if role == "fake":
        from fake_upstream import FakeUpstream

        uvicorn.run(FakeUpstream(), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    else:
        from memvault.runtime.local import create_local_app

        uvicorn.run(create_local_app(os.environ), host="127.0.0.1", port=port, log_level="warning")


def request_body(text: str, stream: bool) -> bytes:
    return json.dumps({"model": "bench", "messages": [{"role": "user", "content": text}], "stream": stream}).encode()


def timed(
    client: httpx.Client, url: str, body: bytes, headers: dict[str, str], first_byte: bool
) -> tuple[float, httpx.Headers]:
    """Milliseconds to the first body byte, or to the whole body; the rest is read either way so
    the connection is reused and the next round starts on equal terms."""
    started = time.perf_counter()
    elapsed = None
    with client.stream("POST", url, content=body, headers=headers) as response:
        for _ in response.iter_raw():
            if first_byte and elapsed is None:
                elapsed = time.perf_counter() - started
        elapsed = elapsed if elapsed is not None else time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}")
    return elapsed * 1000.0, response.headers


def create_memory_key(data_dir: str) -> str:
    from memvault.adapters.local.database import SqliteDatabase
    from memvault.core.keys import create_key

    _, secret = asyncio.run(create_key(SqliteDatabase(Path(data_dir) / "memvault.sqlite3"), "bench", time.time()))
    return secret


def measure(rounds: int, embedder: str, store: bool) -> None:
    with tempfile.TemporaryDirectory() as data, serve("fake", free_port(), {}) as fake:
        secret = create_memory_key(data)
        env = {"MEMVAULT_DATA_DIR": data, "MEMVAULT_EMBEDDER": embedder, "MEMVAULT_OPENAI_BASE_URL": fake}
        with serve("memvault", free_port(), env) as router, httpx.Client(timeout=60, trust_env=False) as client:
            headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
            memory = {**headers, "X-Memory-Key": secret}
            for text in SEED:
                timed(client, f"{router}/v1/chat/completions", request_body(text, False), memory, False)
            time.sleep(2.0)  # let the seeded turns land
            if not store:
                # The memory stays the seeded one, so every round recalls from the same state.
                memory["X-Memory-Store"] = "false"
            results: dict[str, dict[str, list[float]]] = {}
            items = set()
            for stream in (False, True):
                runs: dict[str, list[float]] = {"direct": [], "memvault": [], "retrieval": []}
                body = request_body(QUESTION, stream)
                for _ in range(rounds):
                    runs["direct"].append(timed(client, f"{fake}/v1/chat/completions", body, headers, stream)[0])
                    elapsed, answer = timed(client, f"{router}/v1/chat/completions", body, memory, stream)
                    runs["memvault"].append(elapsed)
                    runs["retrieval"].append(float(answer["x-memory-retrieval-ms"]))
                    items.add(answer["x-memory-items"] + "/" + answer["x-memory-status"])
                    time.sleep(PAUSE)
                results["ttfb streaming" if stream else "non-streaming"] = runs
    print(f"memory router: {rounds} rounds each, embedder={embedder}, store={store}, items/status: {sorted(items)}")
    head = ("direct p50", "p95", "memvault p50", "p95", "added p50", "p95", "recall p50", "p95")
    print(f"{'(ms)':16}" + "".join(f"{h:>13}" for h in head))
    for label, runs in results.items():
        d50, d95 = p50_p95(runs["direct"])
        m50, m95 = p50_p95(runs["memvault"])
        r50, r95 = p50_p95(runs["retrieval"])
        print(f"{label:16}" + "".join(f"{v:13.2f}" for v in (d50, d95, m50, m95, m50 - d50, m95 - d95, r50, r95)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--embedder", default="hash", help="hash (fast, deterministic) or minilm (the real model)")
    parser.add_argument("--store", action="store_true", help="store every measured turn too (memory grows)")
    parser.add_argument("--serve", choices=("fake", "memvault"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        run_server(args.serve, args.port)
    else:
        measure(args.rounds, args.embedder, args.store)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Crash the real local server with SIGKILL in the middle of concurrent writes and forgets, start
it again, write once more, and check what survived:

- every acknowledged write is in its vault (lost acknowledged writes: must be 0);
- every acknowledged forget stays forgotten in vault and mirror (resurrected: must be 0);
- every vault and its mirror hold exactly the same rows and pending buffers (differences: must be 0).

Usage: scripts/crash_loop.py [--rounds N] [--seed S] [--writers W]. The test suite runs two rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

MEMVAULT = Path(sys.executable).with_name("memvault")


@dataclass
class Ledger:
    """What the server acknowledged, per vault session (None is the core vault)."""

    stored: dict[str, str | None] = field(default_factory=dict)
    forgotten: dict[str, str | None] = field(default_factory=dict)
    # Forgets sent: one cut off by the crash may or may not have taken effect.
    forgetting: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The round's kill comes once this many writes are acknowledged, wherever the writers are then:
    # a kill after a span of time found only a few writes done on a busy machine.
    kill_after: int = 0
    killing_time: threading.Event = field(default_factory=threading.Event)


@dataclass
class RoundResult:
    acknowledged: int
    forgotten: int
    lost: int
    resurrected: int
    differences: list[str]


def _environment(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_LOG_LEVEL": "warning"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [str(MEMVAULT), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=_environment(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the server did not start")


def _writer(url: str, key: str, tag: str, seed: int, ledger: Ledger, stop: threading.Event) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
        n = 0
        while not stop.is_set():
            session = rng.choice([None, None, "s1", "s2"])
            extra = {"X-Session-ID": session} if session else {}
            try:
                if ledger.stored and rng.random() < 0.15:
                    with ledger.lock:
                        victim = rng.choice(sorted(ledger.stored))
                        where = ledger.stored[victim]
                        ledger.forgetting.add(victim)
                    params = {"session_id": where} if where else {}
                    if client.delete(f"/v1/memory/{victim}", params=params).status_code == 200:
                        with ledger.lock:
                            ledger.forgotten[victim] = where
                    continue
                batch = [
                    {"role": "user", "content": f"{tag} note {n + i}: the harbour lamp {rng.randrange(10**6)} burns.", "id": f"{tag}-{n + i}"}
                    for i in range(rng.randint(1, 8))
                ]
                n += len(batch)
                if client.post("/v1/memory", json={"messages": batch}, headers=extra).status_code == 200:
                    with ledger.lock:
                        ledger.stored.update((m["id"], session) for m in batch)
                        if len(ledger.stored) >= ledger.kill_after:
                            ledger.killing_time.set()
            except httpx.TransportError:
                return  # the server is gone


async def _verify(data_dir: Path, ledger: Ledger) -> RoundResult:
    from memvault.core import memory
    from memvault.core.credentials import keys
    from memvault.core.settings import load_settings
    from memvault.runtime.local import build_local_deps, close_local_deps

    deps = build_local_deps(load_settings(_environment(data_dir)))
    try:
        differences: list[str] = []
        for key_id, name in await memory.all_vaults(deps):
            differences += await memory.mirror_differences(deps, key_id, name)
        held: set[str] = set()
        for key in await keys.list_keys(deps.db):
            async for record in memory.export_memory(deps, key.id):
                held.update(record.get("source_ids") or [record.get("id")])
        forgotten = set(ledger.forgotten)
        lost = [i for i in ledger.stored if i not in held and i not in ledger.forgetting]
        resurrected = [i for i in forgotten if i in held]
        return RoundResult(len(ledger.stored), len(forgotten), len(lost), len(resurrected), differences)
    finally:
        await close_local_deps(deps)


def run_round(data_dir: Path, key: str, seed: int, writers: int = 4) -> RoundResult:
    rng = random.Random(seed)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    ledger = Ledger(kill_after=rng.randint(25, 80))
    process = _start(data_dir, port)
    stop = threading.Event()
    threads = [
        threading.Thread(target=_writer, args=(url, key, f"r{seed}w{i}", seed * 100 + i, ledger, stop)) for i in range(writers)
    ]
    for thread in threads:
        thread.start()
    # A server that stops acknowledging is killed all the same; the round then counts too few writes.
    ledger.killing_time.wait(timeout=120)
    process.send_signal(signal.SIGKILL)
    process.wait()
    stop.set()
    for thread in threads:
        thread.join()
    process = _start(data_dir, port)
    try:
        httpx.post(
            f"{url}/v1/memory",
            json={"messages": [{"role": "user", "content": f"after crash {seed}", "id": f"after-{seed}"}]},
            headers={"Authorization": f"Bearer {key}"},
        ).raise_for_status()
        ledger.stored[f"after-{seed}"] = None
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    return asyncio.run(_verify(data_dir, ledger))


def run_rounds(data_dir: Path, rounds: int, seed: int, writers: int = 4) -> list[RoundResult]:
    created = subprocess.run(
        [str(MEMVAULT), "keys", "create", "--label", "crash-loop"],
        env=_environment(data_dir),
        capture_output=True,
        text=True,
        check=True,
    )
    key = created.stdout.strip()
    return [run_round(data_dir, key, seed + r, writers) for r in range(rounds)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = run_rounds(Path(tmp), args.rounds, args.seed, args.writers)
    for number, result in enumerate(results, start=1):
        print(json.dumps({"round": number, **{k: v for k, v in vars(result).items() if k != "differences"},
                          "differences": len(result.differences)}))
    totals = {
        "rounds": len(results),
        "acknowledged writes": sum(r.acknowledged for r in results),
        "acknowledged forgets": sum(r.forgotten for r in results),
        "lost acknowledged writes (target 0)": sum(r.lost for r in results),
        "resurrected forgets (target 0)": sum(r.resurrected for r in results),
        "vault/mirror differences (target 0)": sum(len(r.differences) for r in results),
    }
    print(json.dumps(totals, indent=2))
    failed = totals["lost acknowledged writes (target 0)"] + totals["resurrected forgets (target 0)"]
    return 1 if failed or totals["vault/mirror differences (target 0)"] else 0


if __name__ == "__main__":
    sys.exit(main())

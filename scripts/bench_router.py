"""Latency memvault's memory router adds over calling the provider directly, at LoCoMo scale, beside
the one part of it that cannot overlap anything: embedding the query.

A fake upstream (the one the provider tests use) and a local `memvault serve` run as separate
processes on 127.0.0.1. One memory key holds a whole LoCoMo conversation (hundreds of turns over
many sessions, stored through `POST /v1/memory`). Each round sends the same OpenAI chat request
once straight to the fake and once through memvault in auto mode, and records the time to the
whole response (non-streaming) and to the first body byte (streaming). The difference is what the
router adds: key check, limits, recall (query embedding included), injection, receipt and
forwarding; storing the turn and accounting happen after the answer is relayed.

The floor: after each round of the first pass, this process embeds that round's question with the
same model the server runs (its own copy, on its own thread, nothing else running), so the
added time is read against the embedding of the same queries in the same run. The server's own
figure for it (the receipt's latency split) is printed too; it runs beside the vault's keyword
work, so it is no floor.

Three passes: the conversation's own questions in turn (each recalled for the first time), one
question asked again and again (its vector and its recall are cached), and memory reading off
(key check, limits, receipt and forwarding). Rounds store nothing (`X-Memory-Store: false`) unless
`--store`. The last line is one JSON object of the figures.

`--compare-with DIR` runs only the comparison: the same questions through a server started from
another checkout's `src/` (e.g. one from before a change, `git worktree add /tmp/before <commit>`)
and through this one, alternating which goes first, in auto mode and with memory off.

    .venv/bin/python scripts/bench_router.py                      # real MiniLM, 100 rounds a pass
    .venv/bin/python scripts/bench_router.py --embedder hash --rounds 30
    .venv/bin/python scripts/bench_router.py --compare-with /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests" / "api" / "providers"))

from bench_common import LocalServer, cpu_seconds, free_port, local_memvault, p50_p95, print_figures  # noqa: E402
from bench_locomo import DEFAULT_DATA, load_dataset, session_payload  # noqa: E402

# Added milliseconds in auto mode, as multiples of the query embedding's (p50, p95).
TARGET_P50_RATIO, TARGET_P95_RATIO = 1.5, 2.5
CONTEXT_LIMIT = 800  # the router's default context budget (MEMVAULT_CONTEXT_LIMIT_TOKENS)
PAUSE = 0.05  # between rounds, so a background store (embedding included) is not measured
WARM_UP = 10
Runs = dict[str, list[float]]


@contextmanager
def fake_upstream() -> Iterator[str]:
    """The fake provider as its own process, so it does not share a core's time with the client."""
    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve-fake", str(port)])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/ready-probe", timeout=1, trust_env=False)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the fake upstream did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def serve_fake(port: int) -> None:
    import uvicorn
    from fake_upstream import FakeUpstream

    uvicorn.run(FakeUpstream(), host="127.0.0.1", port=port, log_level="warning", lifespan="off")


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


def seed(client: httpx.Client, server: LocalServer, data: Path) -> tuple[str, list[str], int]:
    """A new key holding the first LoCoMo conversation; the key, its questions and turn count."""
    key = server.create_key("bench-router")
    conversation = load_dataset(data, 1)[0]
    shift = time.time() - 86400.0 - conversation.now
    for session in conversation.sessions:
        response = client.post(f"{server.url}/v1/memory", json=session_payload(session, shift),
                               headers={"authorization": f"Bearer {key}"})
        response.raise_for_status()
    return key, [q.text for q in conversation.questions], len(conversation.turns)


def memory_headers(key: str, store: bool) -> dict[str, str]:
    headers = {"content-type": "application/json", "authorization": "Bearer sk-bench", "X-Memory-Key": key}
    return headers if store else {**headers, "X-Memory-Store": "false"}


def warm_up(client: httpx.Client, fake: str, router: str, questions: Sequence[str], headers: dict[str, str]) -> None:
    """Both servers warmed, on reworded questions: no measured round finds its query cached."""
    for text in questions[:WARM_UP]:
        body = request_body(f"{text} Say it again.", False)
        timed(client, f"{fake}/v1/chat/completions", body, headers, False)
        timed(client, f"{router}/v1/chat/completions", body, headers, False)


def run_pass(
    client: httpx.Client, fake: str, router: str, questions: Sequence[str], headers: dict[str, str], rounds: int,
    stream: bool, floor: Callable[[str], tuple[float, float]] | None = None, server_pid: int | None = None,
) -> Runs:
    """``floor``, when given, times the embedding of each round's question after the round;
    ``server_pid``, the router's process, has the CPU time it spent a call recorded (the pass's
    whole, the work after each answer included, over its rounds)."""
    runs: Runs = {"direct": [], "memvault": [], "recall": [], "items": [], "embed": [], "embed_cpu": [], "server_cpu": []}
    cpu = None if server_pid is None else cpu_seconds(server_pid)
    plain = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
    for index in range(rounds):
        text = questions[index % len(questions)]
        body = request_body(text, stream)
        runs["direct"].append(timed(client, f"{fake}/v1/chat/completions", body, plain, stream)[0])
        elapsed, answer = timed(client, f"{router}/v1/chat/completions", body, headers, stream)
        runs["memvault"].append(elapsed)
        runs["recall"].append(float(answer["x-memory-retrieval-ms"]))
        runs["items"].append(float(answer["x-memory-items"]))
        if floor is not None:
            wall, cpu_used = floor(text)
            runs["embed"].append(wall)
            runs["embed_cpu"].append(cpu_used)
        time.sleep(PAUSE)
    if server_pid is not None and cpu is not None:
        runs["server_cpu"].append((cpu_seconds(server_pid) - cpu) * 1000.0 / rounds)
    return runs


def embedding_floor(embedder: str) -> Callable[[str], tuple[float, float]]:
    """Milliseconds this process takes to embed one query with the model the server runs, the way
    the server asks it (a model call on a worker thread), and the CPU milliseconds it used."""
    import asyncio

    from memvault.adapters.local.embedder import make_embedder
    from memvault.adapters.local.native_threads import one_blas_thread

    # As the server's own process has it: otherwise this process's idle BLAS threads spin on the
    # cores the next round's call needs.
    one_blas_thread()
    model, loop = make_embedder(embedder), asyncio.new_event_loop()
    loop.run_until_complete(model.embed(["warm up"]))

    def embed_ms(text: str) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        loop.run_until_complete(model.embed([text]))
        return (time.perf_counter() - started) * 1000.0, (time.process_time() - cpu) * 1000.0

    return embed_ms


def profile_recall(client: httpx.Client, url: str, key: str, questions: Sequence[str], rounds: int) -> Runs:
    """Server-side timings of the recall the router does, through memory search with the router's
    default budget. The questions are reworded a little so their vectors are not cached yet."""
    found: Runs = {"embed_ms": [], "vault_ms": [], "rank_ms": [], "gate_ms": [], "total_ms": []}
    for index in range(rounds):
        body = {"query": f"{questions[index % len(questions)]} Tell me.", "budget_tokens": CONTEXT_LIMIT}
        response = client.post(f"{url}/v1/memory/search", json=body, headers={"authorization": f"Bearer {key}"})
        response.raise_for_status()
        metrics = response.json().get("metrics") or {}
        for name, values in found.items():
            if isinstance(metrics.get(name), int | float):
                values.append(float(metrics[name]))
        time.sleep(PAUSE)
    return found


def added(runs: Runs) -> tuple[float, float]:
    (d50, d95), (m50, m95) = p50_p95(runs["direct"]), p50_p95(runs["memvault"])
    return m50 - d50, m95 - d95


def measure(args: argparse.Namespace) -> None:
    floor = embedding_floor(args.embedder)
    with fake_upstream() as fake, local_memvault(args.embedder, MEMVAULT_OPENAI_BASE_URL=fake) as server, \
            httpx.Client(timeout=60, trust_env=False) as client:
        key, questions, turns = seed(client, server, args.data)
        memory = memory_headers(key, args.store)
        warm_up(client, fake, server.url, questions[::-1], memory)
        passes = {"questions": (questions, memory), "repeated": (questions[:1], memory),
                  "memory off": (questions, {**memory, "X-Memory-Mode": "off"})}
        # The streamed pass rewords its questions: the whole-answer pass has just recalled them.
        streamed = {"questions": [f"{text} Answer briefly." for text in questions]}
        results = {
            (label, stream): run_pass(client, fake, server.url, streamed.get(label, texts) if stream else texts,
                                      headers, args.rounds, stream,
                                      floor if (label, stream) == ("questions", False) else None, server.pid)
            for label, (texts, headers) in passes.items()
            for stream in (False, True)
        }
        profile = profile_recall(client, server.url, key, questions, args.rounds)
    print(f"memory router, {args.embedder} embedder: one key holding {turns} LoCoMo turns; "
          f"{args.rounds} rounds a pass; store={args.store}")
    head = ("direct p50", "p95", "memvault p50", "p95", "added p50", "p95", "recall p50", "p95", "items")
    print(f"{'(ms)':28}" + "".join(f"{h:>13}" for h in head))
    for (label, stream), runs in results.items():
        d50, d95 = p50_p95(runs["direct"])
        m50, m95 = p50_p95(runs["memvault"])
        r50, r95 = p50_p95(runs["recall"])
        items = sum(runs["items"]) / len(runs["items"])
        name = f"{label}, {'first byte' if stream else 'whole answer'}"
        print(f"{name:28}" + "".join(f"{v:13.2f}" for v in (d50, d95, m50, m95, m50 - d50, m95 - d95, r50, r95, items)))
    a50, a95 = added(results[("questions", False)])
    e50, e95 = p50_p95(results[("questions", False)]["embed"])
    print(f"added in auto mode (questions, whole answer): p50 {a50:.1f} ms, p95 {a95:.1f} ms; query embedding "
          f"(same queries, this process) p50 {e50:.1f} ms, p95 {e95:.1f} ms")
    print(f"  p50 {a50 / e50:.2f} x the embedding (target <= {TARGET_P50_RATIO} x), "
          f"p95 {a95 / e95:.2f} x (target <= {TARGET_P95_RATIO} x)")
    off50, off95 = added(results[("memory off", False)])
    split = {name: p50_p95(values)[0] for name, values in profile.items()}
    print(f"where it goes (p50, server-side, new queries): query embedding {split['embed_ms']:.1f} (the vaults' "
          f"keyword work runs beside it), then vault search {split['vault_ms']:.1f}, ranking and filling "
          f"{split['rank_ms']:.1f} (of which the secret gate {split['gate_ms']:.1f}) = recall {split['total_ms']:.1f}; "
          f"key check, limits, receipt and forwarding (memory off, added) {off50:.1f}")
    auto_cpu, off_cpu = (sum(results[(label, False)]["server_cpu"]) for label in ("questions", "memory off"))
    embed_cpu = sum(results[("questions", False)]["embed_cpu"]) / args.rounds
    print(f"CPU a call (the server's threads together, the work after the answer included): auto {auto_cpu:.1f} ms, "
          f"memory off {off_cpu:.1f} ms; the query embedding alone uses {embed_cpu:.1f} ms of CPU in this process. "
          f"On {os.cpu_count()} cores, the rest of a call's CPU either waits for the query's vector or shares "
          f"the cores with the model")
    print_figures({
        "added_p50_ms": round(a50, 2), "added_p95_ms": round(a95, 2), "embed_p50_ms": round(e50, 2),
        "embed_p95_ms": round(e95, 2), "ratio_p50": round(a50 / e50, 2), "ratio_p95": round(a95 / e95, 2),
        "memory_off_added_p50_ms": round(off50, 2), "memory_off_added_p95_ms": round(off95, 2),
        "server_cpu_ms_a_call": {"auto": round(auto_cpu, 2), "memory_off": round(off_cpu, 2)},
        "embed_cpu_ms": round(embed_cpu, 2),
        "recall_split_p50_ms": {name: round(value, 2) for name, value in split.items()},
        "rounds": args.rounds, "embedder": args.embedder,
    })


def compare(args: argparse.Namespace) -> None:
    """This checkout's router against ``args.compare_with``'s, the same rounds alternating."""
    other = {"PYTHONPATH": str(args.compare_with.resolve() / "src")}
    with ExitStack() as stack:
        fake = stack.enter_context(fake_upstream())
        client = stack.enter_context(httpx.Client(timeout=60, trust_env=False))
        servers = {side: stack.enter_context(local_memvault(args.embedder, MEMVAULT_OPENAI_BASE_URL=fake, **extra))
                   for side, extra in (("this", {}), ("other", other))}
        keys = {side: seed(client, server, args.data) for side, server in servers.items()}
        questions = keys["this"][1]
        for side, server in servers.items():
            warm_up(client, fake, server.url, questions[::-1], memory_headers(keys[side][0], args.store))
        modes = {"auto": {}, "memory off": {"X-Memory-Mode": "off"}}
        runs: dict[tuple[str, str], Runs] = {}
        for index in range(args.rounds):
            order = ["this", "other"] if index % 2 == 0 else ["other", "this"]
            for mode, extra in modes.items():
                for side in order:
                    headers = {**memory_headers(keys[side][0], args.store), **extra}
                    done = run_pass(client, fake, servers[side].url, [questions[index % len(questions)]], headers, 1, False,
                                    server_pid=servers[side].pid)
                    for name, values in done.items():
                        runs.setdefault((side, mode), {}).setdefault(name, []).extend(values)
    print(f"memory router, this checkout against {args.compare_with} ({args.rounds} rounds, alternating, "
          f"{args.embedder} embedder; whole answers)")
    figures: dict[str, object] = {"compared_with": str(args.compare_with), "rounds": args.rounds}
    for mode in modes:
        for side in ("other", "this"):
            a50, a95 = added(runs[(side, mode)])
            cpu = sum(runs[(side, mode)]["server_cpu"]) / len(runs[(side, mode)]["server_cpu"])
            print(f"{mode:11} {side:6} added p50 {a50:6.1f} ms  p95 {a95:6.1f} ms  server CPU a call {cpu:6.1f} ms")
            figures[f"{side}_{mode.replace(' ', '_')}_server_cpu_ms"] = round(cpu, 2)
            figures[f"{side}_{mode.replace(' ', '_')}_added_p50_ms"] = round(a50, 2)
            figures[f"{side}_{mode.replace(' ', '_')}_added_p95_ms"] = round(a95, 2)
    print_figures(figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--embedder", default="minilm", help="minilm (the real local model) or hash")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo-dev.json")
    parser.add_argument("--store", action="store_true", help="store every measured turn too (memory grows)")
    parser.add_argument("--compare-with", type=Path, help="another checkout: compare its router with this one's, only that")
    parser.add_argument("--serve-fake", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fake:
        serve_fake(args.serve_fake)
    elif args.compare_with:
        compare(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()

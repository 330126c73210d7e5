"""Measuring helpers shared by the benchmark scripts: percentiles, the budget scorer of the LoCoMo
protocol, and the single-turn retrieval baselines (BM25, dense, reciprocal-rank fusion)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # the protocol's scorer counts a token as four characters, whatever we estimate
RRF_K = 60
_WORD = re.compile(r"[a-z0-9]+")
_SPACE = re.compile(r"\s+")


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile; NaN for no values (a benchmark shows the gap, it does not crash)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def p50_p95(values: Sequence[float]) -> tuple[float, float]:
    return percentile(values, 0.50), percentile(values, 0.95)


def summary(values: Sequence[float]) -> dict[str, float]:
    p50, p95 = p50_p95(values)
    return {"p50": p50, "p95": p95, "n": len(values)}


def print_figures(figures: dict[str, object]) -> None:
    """A benchmark's figures as one JSON object on its last line of output, for tools to read."""
    print(json.dumps(figures, sort_keys=True, default=str), flush=True)


def normalise_whitespace(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def texts_within_budget(texts: Iterable[str], budget_tokens: int) -> list[str]:
    """The leading texts whose lengths add up to at most 4 x budget characters. The first text
    that would cross the limit ends the list: nothing after it counts either."""
    limit = budget_tokens * CHARS_PER_TOKEN
    kept: list[str] = []
    used = 0
    for text in texts:
        used += len(text)
        if used > limit:
            break
        kept.append(text)
    return kept


def evidence_recall(returned: Iterable[str], evidence_texts: Sequence[str], budget_tokens: int) -> float:
    """Share of evidence turns whose whole (whitespace-normalised) text appears in what fits."""
    if not evidence_texts:
        raise ValueError("a question without evidence cannot be scored")
    context = "\n".join(normalise_whitespace(t) for t in texts_within_budget(returned, budget_tokens))
    found = sum(1 for text in evidence_texts if normalise_whitespace(text) in context)
    return found / len(evidence_texts)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25:
    """Okapi BM25 over a fixed list of documents, Lucene's non-negative idf."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._terms = [Counter(words(doc)) for doc in documents]
        self._lengths = [sum(terms.values()) for terms in self._terms]
        self._average_length = (sum(self._lengths) / len(self._lengths)) if documents else 0.0
        document_frequency: Counter[str] = Counter()
        for terms in self._terms:
            document_frequency.update(terms.keys())
        count = len(documents)
        self._idf = {
            term: math.log(1.0 + (count - df + 0.5) / (df + 0.5)) for term, df in document_frequency.items()
        }

    def scores(self, query: str) -> list[float]:
        query_terms = [term for term in set(words(query)) if term in self._idf]
        results = []
        for terms, length in zip(self._terms, self._lengths, strict=True):
            norm = self._k1 * (1.0 - self._b + self._b * length / (self._average_length or 1.0))
            score = 0.0
            for term in query_terms:
                tf = terms.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (self._k1 + 1.0) / (tf + norm)
            results.append(score)
        return results

    def rank(self, query: str) -> list[int]:
        """Document indexes, best first; documents sharing no word with the query are left out."""
        scores = self.scores(query)
        return sorted((i for i, s in enumerate(scores) if s > 0.0), key=lambda i: (-scores[i], i))


def rank_by_similarity(query_vector: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[int]:
    """Document indexes by dot product (the vectors are unit length, so cosine), best first."""
    import numpy as np

    if not len(vectors):
        return []
    scores = np.asarray(vectors, dtype=np.float32) @ np.asarray(query_vector, dtype=np.float32)
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for position, index in enumerate(ranking):
            fused[index] = fused.get(index, 0.0) + 1.0 / (k + position + 1)
    return sorted(fused, key=lambda i: (-fused[i], i))


@dataclass
class RecallTable:
    """Recall per (system, budget), collected per category, printed as one table."""

    categories: dict[int, str]
    rows: dict[tuple[str, int], dict[int, list[float]]]

    @classmethod
    def empty(cls, categories: dict[int, str]) -> RecallTable:
        return cls(categories=categories, rows={})

    def add(self, system: str, budget: int, category: int, recall: float) -> None:
        self.rows.setdefault((system, budget), {}).setdefault(category, []).append(recall)

    def mean(self, column: tuple[str, int], category: int | None) -> float:
        by_category = self.rows.get(column, {})
        values = [v for c, vs in by_category.items() if category in (None, c) for v in vs]
        return sum(values) / len(values) if values else math.nan

    def count(self, category: int | None) -> int:
        column = next(iter(self.rows), None)
        by_category = self.rows.get(column, {}) if column else {}
        return sum(len(vs) for c, vs in by_category.items() if category in (None, c))

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {
            f"{system}@{budget}": {
                **{self.categories[c]: self.mean((system, budget), c) for c in sorted(self.categories)},
                "overall": self.mean((system, budget), None),
            }
            for system, budget in self.columns()
        }

    def columns(self) -> list[tuple[str, int]]:
        """The project first, then each baseline; budgets ascending within a system."""
        systems = list(dict.fromkeys(system for system, _ in self.rows))
        systems.sort(key=lambda system: not system.startswith("memvault"))
        return sorted(self.rows, key=lambda column: (systems.index(column[0]), column[1]))

    def render(self) -> str:
        columns = self.columns()
        header = ["category", "n", *(f"{system}@{budget}" for system, budget in columns)]
        lines = [header]
        for category in [*sorted(self.categories), None]:
            label = "overall" if category is None else f"{category} {self.categories[category]}"
            cells = [f"{self.mean(column, category):.3f}" for column in columns]
            lines.append([label, str(self.count(category)), *cells])
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in lines)


@dataclass
class LocalServer:
    """A memvault server this process started, on a data folder of its own or one it was given."""

    url: str
    env: dict[str, str]
    cli: str
    pid: int

    def create_key(self, label: str, *options: str) -> str:
        """A new memory key (``options``: more of `memvault keys create`'s flags)."""
        import subprocess

        done = subprocess.run(
            [self.cli, "keys", "create", "--label", label, *options], env=self.env, capture_output=True, text=True,
            check=False,
        )
        key = re.search(r"\bmk_[A-Za-z0-9_-]+", done.stdout)
        if done.returncode != 0 or key is None:
            raise SystemExit(f"memvault keys create failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        return key[0]


def memvault_cli() -> str:
    """The `memvault` entry point of the interpreter running this script (the project's venv)."""
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / "memvault"
    found = str(beside) if beside.exists() else shutil.which("memvault")
    if not found:
        raise SystemExit("no `memvault` command: install the project (pip install -e '.[local]')")
    return found


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def local_memvault(
    embedder: str, startup_seconds: float = 120.0, data_dir: str | None = None, **env_extra: str
) -> Iterator[LocalServer]:
    """Start `memvault serve` on a free loopback port and stop it afterwards; without ``data_dir``
    it runs on a throw-away data folder."""
    import tempfile

    if data_dir is None:
        with tempfile.TemporaryDirectory(prefix="memvault-bench-") as scratch, \
                local_memvault(embedder, startup_seconds, scratch, **env_extra) as server:
            yield server
        return
    yield from _serving(embedder, startup_seconds, data_dir, env_extra)


def _serving(embedder: str, startup_seconds: float, data_dir: str, env_extra: dict[str, str]) -> Iterator[LocalServer]:
    import os
    import subprocess
    import time
    from pathlib import Path

    import httpx

    env = {**os.environ, "MEMVAULT_DATA_DIR": data_dir, "MEMVAULT_EMBEDDER": embedder, **env_extra}
    cli, port = memvault_cli(), free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = Path(data_dir) / "server.log"
    with log_path.open("ab") as log:
        command = [cli, "serve", "--host", "127.0.0.1", "--port", str(port)]
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + startup_seconds
        while True:
            if server.poll() is not None:
                raise SystemExit(f"memvault serve exited ({server.returncode}):\n{log_path.read_text()[-2000:]}")
            try:
                httpx.get(f"{url}/health", timeout=2.0)
                break  # any HTTP answer means it is listening
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"memvault serve did not answer within {startup_seconds:.0f} s") from None
                time.sleep(0.25)
        yield LocalServer(url=url, env=env, cli=cli, pid=server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def machine_reference_ms(rounds: int = 3) -> float:
    """Median milliseconds of a fixed pure-Python loop: how fast this machine runs Python right now.
    Shared machines vary by as much as twice from one hour to the next, so a latency figure is read
    beside the reference taken in the same run."""
    import time

    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        total = 0
        for number in range(2_000_000):
            total += number * number
        timings.append((time.perf_counter() - started) * 1000.0)
    return sorted(timings)[len(timings) // 2]


def rss_mb(pid: int) -> tuple[float, float]:
    """Resident memory of a process now and at its peak, in MB (Linux /proc)."""
    from pathlib import Path

    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far, its threads together, user and system (Linux /proc)."""
    import os
    from pathlib import Path

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CapturingUpstream:
    """An OpenAI-compatible upstream on loopback that answers every chat call with a fixed reply
    and keeps the system message it was sent: what the memory router injected."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        captured: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                system = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system"]
                captured.append("\n".join(str(s) for s in system))
                reply = json.dumps({"id": "x", "object": "chat.completion", "model": "bench", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.captured = captured
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()

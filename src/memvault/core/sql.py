"""SQL helpers both wings use: bound-parameter batching under D1's limit, and placeholders."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

# D1 allows at most 100 bound parameters in one statement; batches leave room for a few more.
MAX_IN_PARAMS = 80
T = TypeVar("T")


def in_batches(items: Sequence[T], size: int = MAX_IN_PARAMS) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(count: int) -> str:
    return ", ".join("?" for _ in range(count))

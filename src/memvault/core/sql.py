"""SQL helpers both wings use: bound-parameter batching under D1's limit, placeholders, and the two
executors of a plan (a generator that yields statements and receives their rows), so one query
plan serves synchronous SQL (a vault) and asynchronous SQL (the shared database) alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any, TypeVar

# D1 allows at most 100 bound parameters in one statement; id batches leave room for the few
# fixed parameters beside them (a brain wall is one, whatever the number of scopes).
D1_MAX_BOUND_PARAMETERS = 100
MAX_IN_PARAMS = 80
T = TypeVar("T")
Row = dict[str, Any]
Statement = tuple[str, Sequence[Any]]
Plan = Generator[Statement, list[Row], T]


def in_batches(items: Sequence[T], size: int = MAX_IN_PARAMS) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(count: int) -> str:
    return ", ".join("?" for _ in range(count))


def run_sync(plan: Plan[T], execute: Callable[[str, Sequence[Any]], list[Row]]) -> T:
    try:
        statement = next(plan)
        while True:
            statement = plan.send(execute(*statement))
    except StopIteration as finished:
        result: T = finished.value
        return result


async def run_async(plan: Plan[T], query: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> T:
    try:
        statement = next(plan)
        while True:
            statement = plan.send(await query(*statement))
    except StopIteration as finished:
        result: T = finished.value
        return result

"""The ``SyncSql`` port over a Durable Object's SQLite storage (``ctx.storage``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memvault.adapters.cloudflare.convert import sql_param, to_py
from memvault.core.ports import Row

T = TypeVar("T")


class DurableObjectSql:
    """``execute`` reads every row with ``cursor.toArray()``: a cursor is never held open, and
    ``cursor.one()`` (which throws when no row matches) is never used; ``first`` gives the
    at-most-one-row read instead."""

    def __init__(self, storage: Any) -> None:
        self._storage = storage

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = self._storage.sql.exec(sql, *[sql_param(p) for p in params])
        rows: list[Row] = to_py(cursor.toArray()) or []
        return rows

    def first(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.execute(sql, params)
        return rows[0] if rows else None

    def transaction(self, work: Callable[[], T]) -> T:
        # The result and any exception are kept on the Python side: crossing JS would turn the
        # return value into a proxy and the exception into a JS error.
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                outcome["value"] = work()
            except BaseException as exc:
                outcome["error"] = exc
                raise

        try:
            self._storage.transactionSync(run)
        except BaseException:
            if "error" in outcome:
                raise outcome["error"] from None
            raise
        return outcome["value"]  # type: ignore[no-any-return]


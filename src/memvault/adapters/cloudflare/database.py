"""The ``Database`` port over a D1 binding (``env.DB``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pyodide.ffi import JsException

from memvault.adapters.cloudflare.convert import js_array, sql_param, to_py
from memvault.core.errors import StorageFull, StorageUnavailable, TransientStorageError, WriteRaced
from memvault.core.ports import Row

# The D1 errors Cloudflare documents as worth retrying ("Retry queries" in the D1 docs).
TRANSIENT_D1_ERRORS = (
    "Network connection lost",
    "storage caused object to be reset",
    "reset because its code was updated",
    "D1 DB is overloaded",
)


@contextmanager
def d1_errors() -> Iterator[None]:
    """D1 failures as the domain errors the edge renders; the statement and its values stay out."""
    try:
        yield
    except JsException as exc:
        text = str(exc)
        if "SQLITE_CONSTRAINT" in text or "constraint failed" in text:
            raise WriteRaced("another write changed these rows first") from exc
        if "SQLITE_FULL" in text:
            raise StorageFull("the database is full; nothing of this write was stored") from exc
        passing = next((marker for marker in TRANSIENT_D1_ERRORS if marker in text), None)
        if passing is not None:
            raise TransientStorageError(f"the database failed for now ({passing})") from exc
        raise StorageUnavailable("the database failed") from exc


class D1Database:
    def __init__(self, binding: Any) -> None:
        self._db = binding

    def _statement(self, sql: str, params: Sequence[Any]) -> Any:
        statement = self._db.prepare(sql)
        if params:
            statement = statement.bind(*[sql_param(p) for p in params])
        return statement

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with d1_errors():
            result = await self._statement(sql, params).all()
        return [_row(r) for r in (to_py(result.results) or [])]

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with d1_errors():
            result = await self._statement(sql, params).run()
        meta = to_py(result.meta) or {}
        return int(meta.get("changes") or 0)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if not statements:
            return
        # D1 runs a batch as one implicit transaction: a failing statement rolls back the rest.
        with d1_errors():
            await self._db.batch(js_array([self._statement(sql, params) for sql, params in statements]))


def _row(row: dict[str, Any]) -> Row:
    # D1 hands BLOB columns back as arrays of byte values; no other column type is a list.
    return {k: bytes(v) if isinstance(v, list) else v for k, v in row.items()}

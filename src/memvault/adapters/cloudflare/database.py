"""The ``Database`` port over a D1 binding (``env.DB``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memvault.adapters.cloudflare.convert import js_array, sql_param, to_py
from memvault.core.ports import Row


class D1Database:
    def __init__(self, binding: Any) -> None:
        self._db = binding

    def _statement(self, sql: str, params: Sequence[Any]) -> Any:
        statement = self._db.prepare(sql)
        if params:
            statement = statement.bind(*[sql_param(p) for p in params])
        return statement

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        result = await self._statement(sql, params).all()
        return [_row(r) for r in (to_py(result.results) or [])]

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        result = await self._statement(sql, params).run()
        meta = to_py(result.meta) or {}
        return int(meta.get("changes") or 0)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if not statements:
            return
        # D1 runs a batch as one implicit transaction: a failing statement rolls back the rest.
        await self._db.batch(js_array([self._statement(sql, params) for sql, params in statements]))


def _row(row: dict[str, Any]) -> Row:
    # D1 hands BLOB columns back as arrays of byte values; no other column type is a list.
    return {k: bytes(v) if isinstance(v, list) else v for k, v in row.items()}

"""SQLite for the Durable Object SQL stand-in of the Pyodide harness.

Pyodide's ``sqlite3`` is a separate package that the npm ``pyodide`` release does not carry, and
Node 20 has no built-in SQLite, so the harness runs this small CPython process and talks to it
synchronously: one JSON request per line on stdin, one JSON answer per line on stdout.

It behaves the way ``ctx.storage.sql`` does where our adapter can tell: numbers are bound as
doubles (JS has no other kind), several statements may be sent in one ``exec`` (the cursor is the
last one's), ``BEGIN``/``SAVEPOINT``/``COMMIT`` are refused in SQL (transactions go through
``transactionSync``, nested ones as savepoints), and the cursor reports ``rowsWritten``.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import sys
from typing import Any

Value = Any


def decode(value: Value) -> Value:
    if isinstance(value, dict) and "$blob" in value:
        return base64.b64decode(value["$blob"])
    if isinstance(value, dict) and "$float" in value:
        return float(value["$float"])
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int):
        return float(value)
    return value


def encode(value: Value) -> Value:
    if isinstance(value, bytes):
        return {"$blob": base64.b64encode(value).decode()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    return value


def deny_transactions(action: int, *_: Any) -> int:
    # The same rule workerd's authorizer applies to ctx.storage.sql.
    return sqlite3.SQLITE_DENY if action in {sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT} else sqlite3.SQLITE_OK


class Host:
    def __init__(self) -> None:
        self.databases: dict[int, sqlite3.Connection] = {}
        self.depth: dict[int, int] = {}

    def open(self) -> dict[str, Any]:
        handle = len(self.databases) + 1
        conn = sqlite3.connect(":memory:", isolation_level=None)
        conn.set_authorizer(deny_transactions)
        self.databases[handle], self.depth[handle] = conn, 0
        return {"db": handle}

    def exec(self, handle: int, sql: str, params: list[Value]) -> dict[str, Any]:
        conn = self.databases[handle]
        statements = split(sql)
        if params and len(statements) > 1:
            raise ValueError("bindings are only allowed with a single statement")
        before = conn.total_changes
        cursor = None
        for statement in statements:
            cursor = conn.execute(statement, [decode(p) for p in params])
        columns = [d[0] for d in cursor.description] if cursor is not None and cursor.description else []
        rows = [[encode(v) for v in row] for row in cursor.fetchall()] if cursor is not None else []
        return {"columns": columns, "rows": rows, "rowsWritten": conn.total_changes - before}

    def transaction(self, handle: int, step: str) -> dict[str, Any]:
        conn = self.databases[handle]
        conn.set_authorizer(None)
        try:
            if step == "begin":
                self.depth[handle] += 1
                conn.execute(f"SAVEPOINT tx{self.depth[handle]}")
            elif step == "commit":
                conn.execute(f"RELEASE tx{self.depth[handle]}")
                self.depth[handle] -= 1
            else:
                name = f"tx{self.depth[handle]}"
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
                self.depth[handle] -= 1
        finally:
            conn.set_authorizer(deny_transactions)
        return {}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "open":
            return self.open()
        if op == "exec":
            return self.exec(request["db"], request["sql"], request.get("params") or [])
        if op in {"begin", "commit", "rollback"}:
            return self.transaction(request["db"], op)
        raise ValueError(f"unknown op {op!r}")


def split(script: str) -> list[str]:
    statements, current = [], ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \t\r\n;"):
                statements.append(current)
            current = ""
    if current.strip(" \t\r\n;"):
        statements.append(current.rstrip(";"))
    return statements or [script]


def main() -> None:
    host = Host()
    for line in sys.stdin:
        request: dict[str, Any] = {}
        try:
            request = json.loads(line)
            answer = host.handle(request)
        except Exception as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        answer["seq"] = request.get("seq")
        sys.stdout.write(json.dumps(answer, allow_nan=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Two processes opening the same new vault file at once both find its migrations pending; each
migration is asked for again inside the write lock, so the second applies none of them twice (a
second ALTER TABLE would fail, and a second record of the migration break its unique name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.memory.schema import MIGRATIONS, migrate


class OtherProcessFirst:
    """A connection that, right after reading which migrations are done, lets ``other`` migrate
    the same file whole, as another process opening it at that moment would."""

    def __init__(self, sql: SqliteSql, other: SqliteSql) -> None:
        self._sql, self._other, self._raced = sql, other, False

    def execute(self, statement: str, params: Any = ()) -> Any:
        found = self._sql.execute(statement, params)
        if statement.startswith("SELECT name FROM schema_migrations") and not self._raced:
            self._raced = True
            migrate(self._other)
        return found

    def transaction(self, work: Any) -> Any:
        return self._sql.transaction(work)


def test_a_migration_another_process_applied_meanwhile_is_not_applied_again(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite3"
    first, second = SqliteSql(path), SqliteSql(path)
    try:
        assert migrate(OtherProcessFirst(first, second)) == []  # type: ignore[arg-type]
        names = {row["name"] for row in first.execute("SELECT name FROM schema_migrations")}
        assert names == {name for name, _ in MIGRATIONS}
    finally:
        first.close()
        second.close()

"""The maintenance pass's cursor and budget: what one cron invocation may spend, and where the
pass stands between invocations (a row of ``maintenance_cursor`` in the shared database)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.core.ports import Database
from memvault.core.sql import Row

CURSOR_NAME = "nightly"


def pass_day(now: float) -> str:
    """A pass belongs to the UTC day it started on: the first run of a new day starts the next one."""
    return time.strftime("%Y-%m-%d", time.gmtime(now))


@dataclass
class PassCursor:
    day: str
    started_at: float
    stages_done: list[str] = field(default_factory=list)
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)  # each stage's own resume point
    finished: bool = False

    def state(self, stage: str) -> dict[str, Any]:
        return self.stages.setdefault(stage, {})

    def to_json(self) -> str:
        return json.dumps({"day": self.day, "started_at": self.started_at, "stages_done": self.stages_done,
                           "stages": self.stages, "finished": self.finished}, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> PassCursor:
        data = json.loads(raw)
        return cls(str(data["day"]), float(data["started_at"]), list(data.get("stages_done") or []),
                   dict(data.get("stages") or {}), bool(data.get("finished")))


async def load_cursor(db: Database) -> PassCursor | None:
    found = await db.query("SELECT state FROM maintenance_cursor WHERE name = ?", (CURSOR_NAME,))
    return PassCursor.from_json(str(found[0]["state"])) if found else None


async def save_cursor(db: Database, cursor: PassCursor, now: float) -> None:
    # An upsert of one row: repeating it is harmless, so a retried save cannot go wrong.
    await db.execute(
        "INSERT INTO maintenance_cursor (name, state, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
        (CURSOR_NAME, cursor.to_json(), now),
    )


class CountingDatabase:
    """The shared database, counting the statements this invocation sends (D1 counts each
    statement of a batch toward its per-invocation limit, so a batch counts as many)."""

    def __init__(self, inner: Database) -> None:
        self.inner = inner
        self.statements = 0

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self.statements += 1
        return await self.inner.query(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self.statements += 1
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        self.statements += len(statements)
        await self.inner.batch(statements)


@dataclass
class Budget:
    """What one invocation may spend: database statements and vaults tended. Work is checked
    against it before each unit (a vault, a backup page), so one unit may overrun it a little;
    the defaults leave room below D1's 1,000 queries for that."""

    db: CountingDatabase
    max_statements: int
    max_vaults: int
    vaults_tended: int = 0
    units: int = 0  # vaults, stages and backup pages done by this invocation

    @property
    def spent(self) -> bool:
        # Each invocation does at least one unit, so a pass always moves on, whatever the budget.
        if self.units == 0:
            return False
        return self.db.statements >= self.max_statements or self.vaults_tended >= self.max_vaults

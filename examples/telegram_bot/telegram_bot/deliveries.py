"""Telegram delivers an update again until its webhook has answered 2xx in time, so one update
may arrive twice (a slow first answer, a retry after an error). Each chat remembers the update ids
it has taken on, in the chat's own storage (its Durable Object's SQLite on Cloudflare, its SQLite
file locally); a second delivery of one is dropped, so a model is asked and a reply sent once."""

from __future__ import annotations

from memvault.core.ports import SyncSql

# How many recent update ids a chat keeps; Telegram re-sends an update for at most a day, and no
# chat sees this many updates in one.
KEPT = 1000


class Deliveries:
    def __init__(self, store: SyncSql) -> None:
        self._store = store
        self._store.execute("CREATE TABLE IF NOT EXISTS handled_updates (update_id INTEGER PRIMARY KEY)")

    def claim(self, update_id: int) -> bool:
        """True the first time ``update_id`` is claimed, False for a repeated delivery."""

        def take() -> bool:
            if self._store.execute("SELECT 1 FROM handled_updates WHERE update_id = ?", (update_id,)):
                return False
            self._store.execute("INSERT INTO handled_updates (update_id) VALUES (?)", (update_id,))
            self._store.execute(
                "DELETE FROM handled_updates WHERE update_id NOT IN"
                " (SELECT update_id FROM handled_updates ORDER BY update_id DESC LIMIT ?)", (KEPT,))
            return True

        return self._store.transaction(take)

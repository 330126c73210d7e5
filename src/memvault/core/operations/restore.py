"""Restore: a fresh shared database rebuilt from a backup (``core/operations/backup.py``), every vault given
back the messages the backup holds, then every vault's mirror rebuilt from its vault, so what was
written to a vault after the backup is not lost from the mirror. Keyword indexes fill as rows are
inserted (the migrations' triggers); generated columns are computed again; messages are stored
through the one write path, so their chunks are cut and embedded again.

Every step only adds what is missing (rows by key, messages by id), so a restore that stopped
part-way is finished by running it again with ``force``."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from memvault.core import brain, memory
from memvault.core.brain.rows import BODY_CONTENT_TYPE, blob_key_of
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidInput, MemvaultError, StorageUnavailable
from memvault.core.memory.transfer import HeldMessage, held_from, store_held
from memvault.core.operations.backup_format import READABLE_FORMATS, TABLE_NAMES, decode_value
from memvault.core.retry import is_transient_storage, retry

log = logging.getLogger(__name__)
STATEMENTS_PER_BATCH = 50
MESSAGES_PER_STORE = 500
FINISH = "restore again with force to finish it (nothing is stored twice)"
# Tables whose rows make a database "not empty" for a restore.
HOLDING = ("memory_keys", "vaults", "mirror_rows", "memory", "event_log", "skills")


@dataclass
class RestoreReport:
    backup_id: str
    rows: dict[str, int] = field(default_factory=dict)
    messages: int = 0  # in the backup
    messages_stored: int = 0  # by this restore (a vault that still held a message keeps it)
    bodies: int = 0  # long facts' full bodies in the backup
    facts_embedded: int = 0  # the vector index is not in a backup: facts are embedded again
    mirrors_rebuilt: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def restore_backup(deps: Deps, lines: Sequence[str], force: bool = False) -> RestoreReport:
    """Load a backup's lines into the database and the facts' bodies into the blob store, give
    every vault back its messages, then rebuild every vault's mirror. The whole backup is checked
    first (header, every line, the end line's counts), so a truncated or foreign file is refused
    before anything is written. Refuses a database that holds anything unless ``force``: then rows,
    bodies and messages already there win and the backup fills in what is missing. A vault whose
    messages could not be stored is named in ``errors`` (the others are restored); restoring again
    with ``force`` finishes it."""
    backup = check_backup(lines, deps.clock())
    report = backup.report
    if not force:
        await _require_empty(deps)
    try:
        for start in range(0, len(backup.inserts), STATEMENTS_PER_BATCH):
            batch = backup.inserts[start : start + STATEMENTS_PER_BATCH]
            # Each statement inserts only what is missing: a batch repeated after a passing failure lands once.
            await retry(partial(deps.db.batch, batch), is_transient_storage)
        for key, data in backup.bodies.items():
            if await deps.blobs.get(key) is None:
                await deps.blobs.put(key, data, BODY_CONTENT_TYPE)
    except Exception as exc:
        detail = exc.message if isinstance(exc, MemvaultError) else type(exc).__name__
        raise StorageUnavailable(f"the restore stopped while loading the database ({detail}): {FINISH}") from exc
    try:
        report.facts_embedded = await _embed_facts(deps)
    except Exception as exc:  # the facts stay marked unembedded: the nightly run embeds them
        report.errors.append(f"embed facts: {exc.message if isinstance(exc, MemvaultError) else type(exc).__name__}")
        log.warning("restore could not embed the facts: %s", type(exc).__name__)
    for key_id, held in backup.messages.items():
        try:
            report.messages_stored += await store_held(deps, key_id, held, MESSAGES_PER_STORE)
        except Exception as exc:  # the other keys' messages are restored; a forced run finishes this one
            detail = exc.message if isinstance(exc, MemvaultError) else type(exc).__name__
            report.errors.append(f"messages of {key_id}: {detail}")
            log.warning("restore could not store one key's messages: %s", type(exc).__name__)
    for key_id, name in await memory.all_vaults(deps):
        try:
            await memory.rebuild_mirror(deps, key_id, name)
            report.mirrors_rebuilt += 1
        except Exception as exc:  # that vault keeps the mirror the backup held; the next sync retries
            report.errors.append(f"rebuild {name}: {type(exc).__name__}")
            log.warning("restore could not rebuild one mirror: %s", type(exc).__name__)
    return report


async def _embed_facts(deps: Deps) -> int:
    credential = brain.maintenance_credential(deps.settings)
    batch, embedded = deps.tuning.reembed_batch, 0
    current = (await deps.db.query("SELECT COUNT(*) AS n FROM memory WHERE superseded_at IS NULL"))[0]["n"]
    for _ in range(int(current) // batch + 1):  # as many rounds as the facts need, should one keep failing
        done = await brain.embed_pending(deps, credential, batch)
        embedded += done
        if done < batch:
            break
    return embedded


@dataclass
class CheckedBackup:
    """A backup's content, checked whole: rows as insert statements, bodies by blob key, messages by key id."""

    report: RestoreReport
    inserts: list[tuple[str, list[Any]]] = field(default_factory=list)
    bodies: dict[str, bytes] = field(default_factory=dict)
    messages: dict[str, list[HeldMessage]] = field(default_factory=dict)


def check_backup(lines: Sequence[str], now: float) -> CheckedBackup:
    """The backup's content, once its header, rows, bodies, messages and end line agree."""
    backup: CheckedBackup | None = None
    named_bodies: set[str] = set()
    expected: dict[str, Any] | None = None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        entry = _parse(text, number)
        if backup is None:
            backup = CheckedBackup(_start(entry))
        elif expected is not None:
            raise InvalidInput(f"backup line {number} follows the end line")
        elif "end" in entry:
            expected = _counts(entry["end"], number)
        elif "message" in entry:
            key_id, held = _message(entry["message"], number, now)
            backup.report.messages += 1
            if held is not None:
                backup.messages.setdefault(key_id, []).append(held)
        elif "blob" in entry:
            key, data = _body(entry["blob"], number)
            backup.bodies[key] = data
        else:
            backup.inserts.append(_insert(entry, number, now))  # checks the table and the row's shape
            backup.report.rows[entry["table"]] = backup.report.rows.get(entry["table"], 0) + 1
            if entry["table"] == "memory" and isinstance(entry["row"].get("body_uri"), str):
                named_bodies.add(blob_key_of(entry["row"]["body_uri"]))
    if backup is None:
        raise InvalidInput("the backup is empty")
    backup.report.bodies = len(backup.bodies)
    found = {"rows": backup.report.rows, "messages": backup.report.messages, "bodies": backup.report.bodies}
    if expected != found:
        raise InvalidInput("the backup is incomplete: its end line is missing or its counts differ")
    if not set(backup.bodies) <= named_bodies:
        raise InvalidInput("the backup holds a body no fact of it names")
    return backup


def _counts(end: object, number: int) -> dict[str, Any]:
    if not isinstance(end, dict):
        raise InvalidInput(f"backup line {number} is not an end line")
    try:
        rows = {str(k): int(v) for k, v in dict(end.get("rows") or {}).items() if int(v)}
        return {"rows": rows, "messages": int(end.get("messages") or 0), "bodies": int(end.get("bodies") or 0)}
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"backup line {number} has counts that are not numbers") from exc


def _body(blob: object, number: int) -> tuple[str, bytes]:
    key = blob.get("key") if isinstance(blob, dict) else None
    data = decode_value(blob.get("data")) if isinstance(blob, dict) else None
    if not isinstance(key, str) or not isinstance(data, bytes):
        raise InvalidInput(f"backup line {number} is not a body (a key and its bytes)")
    return key, data


def _message(record: object, number: int, now: float) -> tuple[str, HeldMessage | None]:
    key_id = record.get("key_id") if isinstance(record, dict) else None
    if not isinstance(key_id, str) or not key_id:
        raise InvalidInput(f"backup line {number} is a message of no key")
    return key_id, held_from(record, now, f"backup line {number}")


async def _require_empty(deps: Deps) -> None:
    for table in HOLDING:
        if await deps.db.query(f"SELECT 1 AS held FROM {table} LIMIT 1"):
            raise Conflict(f"the database is not empty ({table} holds rows); restore into a fresh one, or force it")


def _parse(text: str, number: int) -> dict[str, Any]:
    try:
        entry = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"backup line {number} is not JSON") from exc
    if not isinstance(entry, dict):
        raise InvalidInput(f"backup line {number} is not an object")
    return entry


def _start(entry: dict[str, Any]) -> RestoreReport:
    header = entry.get("backup")
    if not isinstance(header, dict) or header.get("format") not in READABLE_FORMATS:
        formats = " or ".join(str(f) for f in READABLE_FORMATS)
        raise InvalidInput(f"not a memvault backup of format {formats} (its first line must be the header)")
    return RestoreReport(backup_id=str(header.get("id")))


def _insert(entry: dict[str, Any], number: int, now: float) -> tuple[str, list[Any]]:
    table, row = entry.get("table"), entry.get("row")
    if table not in TABLE_NAMES or not isinstance(row, dict) or not row:
        raise InvalidInput(f"backup line {number} names no known table and row")
    columns = [str(c) for c in row]
    if any(not c.replace("_", "").isalnum() for c in columns):
        raise InvalidInput(f"backup line {number} has a column name that is not one")
    values = [decode_value(row[c]) for c in columns]
    if table in ("memory", "fact_passages") and "embedded_at" in columns:
        # The vector index is not in the backup: the restore embeds the facts again.
        values[columns.index("embedded_at")] = None
    if table == "cache_generations":
        # Cached answers are keyed by these numbers: restored ones start past any number the lost
        # database reached, so no cached answer of it is ever taken for one of this database.
        values[columns.index("generation")] = int(row["generation"]) + int(now)
    names = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" for _ in columns)
    # OR IGNORE: a row already there wins (a forced restore fills gaps and never rewrites a row,
    # which would also leave its keyword index behind).
    return f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", values

"""Everything a key holds, read out in the order its vaults took it: what ``memvault export``
writes and the nightly backup reads (``core/operations/backup_pages.py``). An export is a read
surface like any other: its texts pass the secret gate on the way out; the backup, a copy of the
store itself, reads the vaults as they are."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from memvault.core.deps import Deps
from memvault.core.memory.metadata import metadata_value, redact_metadata
from memvault.core.memory.read.vaults import vaults_of
from memvault.core.memory.transfer import chunk_record, export_records, vault_label
from memvault.core.models import MessagePage
from memvault.core.redaction.recall import recalled


async def vault_messages(deps: Deps, name: str, after: int, limit: int) -> MessagePage:
    """One page of a vault's messages in the order it took them, after position ``after``; the
    page that reaches the end holds the pending buffer too. What exports and backups read."""
    return await deps.vaults.vault(name).messages(after, limit)


async def export_memory(deps: Deps, key_id: str, page_size: int = 500) -> AsyncIterator[dict[str, Any]]:
    """Everything the key holds, vault by vault, as ``memvault import`` reads it back
    (``transfer.py``): the chunks, then the messages in the order the vault took them, pending last."""
    for name in await vaults_of(deps, key_id):
        label = vault_label(name)
        after: str | None = None
        while rows := await deps.vaults.vault(name).rows(after, page_size):
            for row in rows:
                if row.kind == "chunk":
                    yield _gated(chunk_record(row, label))
            after = rows[-1].id
        position = 0
        while True:
            page = await vault_messages(deps, name, position, page_size)
            for record in export_records(page, label):
                yield _gated(record)
            if page.complete:
                break
            position = page.after


def _gated(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its text through the gate (stored before a rule existed, it may hold a secret)."""
    for name in ("text", "content", "model"):
        if isinstance(record.get(name), str):
            record[name] = recalled(record[name]).text
    if isinstance(record.get("metadata"), dict):
        record["metadata"] = metadata_value(redact_metadata(json.dumps(record["metadata"])).text)
    return record

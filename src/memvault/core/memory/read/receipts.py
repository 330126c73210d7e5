"""Reading a memory key's receipts, with the messages a receipt names resolved as the store holds
them now (the mirror's rows and pending buffer): a message purged or cleared since shows as gone,
and one forgotten since is no longer named at all (the receipt counts it as forgotten). Texts pass
the secret gate on their way out, as every recalled text does. The brain facts a receipt names are
resolved beside these by ``core.answers.receipts``, the one reader every surface runs."""

from __future__ import annotations

from memvault.core.deps import Deps
from memvault.core.errors import NotFound
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.names import vault_name
from memvault.core.receipts.commands import ReceiptCommand, ReceiptsCommand
from memvault.core.receipts.model import GONE, KEPT, MESSAGE, RecalledMemory, Receipt, ReceiptDay, ReceiptView
from memvault.core.receipts.store import ReceiptStore
from memvault.core.redaction.recall import recalled
from memvault.core.sql import in_batches, placeholders


async def read_receipt(deps: Deps, key_id: str, command: ReceiptCommand) -> ReceiptView:
    """One receipt of the key; another key's receipt is as absent as one that never was."""
    receipt = await ReceiptStore(deps.db).get(key_id, command.id)
    if receipt is None:
        raise NotFound("no such receipt")
    return ReceiptView(receipt, await _memories(deps, key_id, receipt))


async def list_receipts(deps: Deps, key_id: str, command: ReceiptsCommand) -> ReceiptDay:
    return ReceiptDay(command.day, tuple(await ReceiptStore(deps.db).day(key_id, command.day, command.limit)))


async def _memories(deps: Deps, key_id: str, receipt: Receipt) -> tuple[RecalledMemory, ...]:
    wanted: dict[str, list[str]] = {}
    for item in (*receipt.items, *receipt.cut):
        if item.kind == MESSAGE:
            vault = vault_name(key_id, None if item.vault == "core" else receipt.session_id)
            wanted[vault] = list(dict.fromkeys([*wanted.get(vault, []), *item.ids]))
    found: dict[str, RecalledMemory] = {}
    mirror = MirrorStore(deps.db)
    for vault, ids in wanted.items():
        for batch in in_batches(ids):
            for row in await deps.db.query(
                "SELECT s.value AS ref, m.role, m.text, m.ts_end FROM mirror_rows m, json_each(m.source_ids) s "
                f"WHERE m.key_id = ? AND m.vault = ? AND m.kind = 'message' AND s.value IN ({placeholders(len(batch))})",
                (key_id, vault, *batch),
            ):
                found[str(row["ref"])] = RecalledMemory(
                    str(row["ref"]), MESSAGE, KEPT, str(row["role"]), recalled(str(row["text"])).text, float(row["ts_end"])
                )
        for message in await mirror.buffer(key_id, vault):
            if message.id in ids:
                found[message.id] = RecalledMemory(
                    message.id, MESSAGE, KEPT, message.role, recalled(message.content).text, message.timestamp
                )
    named = dict.fromkeys(ref for ids in wanted.values() for ref in ids)
    return tuple(found.get(ref, RecalledMemory(ref, MESSAGE, GONE, None, None, None)) for ref in named)

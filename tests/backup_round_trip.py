"""The backup round trip as plain async steps over any deps (local stores on CPython, D1/R2 and
the Vault objects in the Pyodide tier): fill every table the shared database holds, read it back
through every read path, and compare the readings before a backup and after a restore."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from memvault.core import brain, memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.models import Message
from memvault.core.operations.backup import backups_index
from memvault.core.operations.backup_format import part_key

NOW = 1_800_000_000.0
WRITER = "tok-backup-writer"
READER = "tok-backup-reader"


def credentials() -> str:
    def digest(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    return json.dumps({
        digest(WRITER): {"name": "writer", "scopes": ["business", "family"], "writer": True},
        digest(READER): {"name": "reader", "scopes": ["family"], "writer": False},
    })


@dataclass
class Filled:
    key_secret: str
    key_id: str
    fact_ids: list[str]


async def fill(deps: Deps) -> Filled:
    key, secret = await keys.create_key(deps.db, "backup", NOW - 3600)
    session_messages = [
        Message(role="user" if i % 2 == 0 else "assistant", id=f"b-{i}", timestamp=NOW - 3000 + i,
                content=f"Turn {i}: the sailing boat Nautilus is moored at pier {40 + i} in Porto harbour.")
        for i in range(10)
    ]
    await memory.store_conversation(deps, key.id, session_messages)
    await memory.store_conversation(deps, key.id, session_messages[:4], session_id="trip")
    writer = await brain.auth_of(WRITER, deps)
    long_body = " ".join(f"Clause {i}: the lease of unit {i} renews every March with ticker ZQX{i}." for i in range(40))
    written = await brain.WRITE_FACTS.perform(deps, writer, {"bands": False, "facts": [
        {"content": "Invoice INV-20931 from Acme was paid on 3 March.", "scope": "business", "source": "ledger"},
        {"content": "Aunt Mildred's birthday is on 14 July.", "scope": "family", "source": "calendar", "pinned": True},
        {"content": long_body, "scope": "family", "source": "leases"},
    ]})
    first = written.decisions[0].id
    await brain.WRITE_FACTS.perform(deps, writer, {"content": "Invoice INV-20931 from Acme was paid on 4 March.",
                                                   "scope": "business", "source": "ledger", "supersedes": first,
                                                   "bands": False})
    await brain.REGISTER_SKILL.perform(deps, writer, {"slug": "pay-invoice", "scope": "business",
                                                      "content": "Check the ledger, then pay by transfer."})
    return Filled(secret, key.id, [str(d.id) for d in written.decisions])


async def read_everything(deps: Deps, filled: Filled) -> dict[str, Any]:
    """What every read path answers (times and scores left out where a rebuild may move them)."""
    key = await keys.authenticate(deps.db, filled.key_secret)
    found = await memory.search_memory(deps, key.id, "where is the Nautilus moored?", now=NOW)
    writer, reader = await brain.auth_of(WRITER, deps), await brain.auth_of(READER, deps)
    keyword = brain.to_plain(await brain.SEARCH_FACTS.perform(deps, writer, {"query": "INV-20931"}))
    hybrid = brain.to_plain(await brain.SEARCH_FACTS.perform(deps, writer, {"query": "Acme invoice", "mode": "hybrid"}))
    walled = brain.to_plain(await brain.SEARCH_FACTS.perform(deps, reader, {"query": "INV-20931"}))
    envelope = brain.to_plain(await brain.RECALL.perform(deps, reader, {"query": "lease renews"}))
    chain = brain.to_plain(await brain.FACT_HISTORY.perform(deps, writer, {"id": filled.fact_ids[0]}))
    body = brain.to_plain(await brain.FACT_BODY.perform(deps, reader, {"id": filled.fact_ids[2]}))
    skills = brain.to_plain(await brain.LIST_SKILLS.perform(deps, writer, {}))
    return {
        "key": key.id,
        "memory": sorted(item.text for item in found.items),
        "keyword": [r["id"] for r in keyword["results"]],
        "hybrid": sorted(r["id"] for r in hybrid["results"]),
        "walled": walled["results"],
        "recall": {"core": [e["id"] for e in envelope["core"]["entries"]],
                   "recent": [e["id"] for e in envelope["recent"]], "facts": [e["id"] for e in envelope["facts"]]},
        "history": chain,
        "body": body,
        "skills": skills,
    }


async def read_backup(deps: Deps, backup_id: str) -> list[bytes]:
    """The part objects of one complete backup, in order (their concatenation is the JSONL)."""
    entry = next((e for e in await backups_index(deps) if e["id"] == backup_id), None)
    if entry is None:
        raise LookupError(f"no complete backup {backup_id}")
    parts = []
    for number in range(1, int(entry["parts"]) + 1):
        data = await deps.blobs.get(part_key(backup_id, number))
        if data is None:
            raise LookupError(f"backup {backup_id} is missing part {number}")
        parts.append(data)
    return parts

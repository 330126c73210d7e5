"""The nightly maintenance run over real local stores (sqlite vaults and mirror, hash embedder)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from local_deps import MakeDeps
from memvault.core import memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.models import Message
from memvault.core.tuning import Tuning
from memvault.runtime.cron import run_cron

NOW = 1_800_000_000.0
DAY = 86_400.0


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    # Small chunks: a dozen turns make chunks and a pending tail.
    return make_deps(tuning=Tuning(chunk_tokens=60), clock=lambda: NOW)


def conversation(prefix: str, at: float, turns: int = 12) -> list[Message]:
    return [
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"{prefix} turn {i}: the invoice INV-{i:04d} for the Lisbon office was paid on time again.",
            timestamp=at + i,
            id=f"{prefix}-{i}",
        )
        for i in range(turns)
    ]


async def vault_counts(deps: Deps, key_id: str) -> dict[str, int]:
    core = (await memory.memory_stats(deps, key_id)).vaults["core"]
    return {
        "vault_rows": core.vault.messages + core.vault.chunks,
        "mirror_rows": core.mirror.rows,
        "buffered": core.vault.buffered_messages,
        "unembedded": core.vault.unembedded,
    }


async def test_purge_removes_old_rows_from_vault_and_mirror_unless_the_key_keeps_its_archive(deps: Deps) -> None:
    purged, _ = await keys.create_key(deps.db, "purged", NOW)
    kept, _ = await keys.create_key(deps.db, "kept", NOW, keep_archive=True)
    for key in (purged, kept):
        await memory.store_conversation(deps, key.id, conversation("old", NOW - 120 * DAY))
        await memory.store_conversation(deps, key.id, conversation("new", NOW - 1 * DAY))
    before = await vault_counts(deps, purged.id)

    report = await run_cron(deps, "17 3 * * *", now=NOW)

    assert report.ok, report.errors
    assert report.keys == 2 and report.purged_keys == 1 and report.kept_archive_keys == 1
    after = await vault_counts(deps, purged.id)
    assert 0 < after["vault_rows"] < before["vault_rows"]
    assert after["mirror_rows"] == after["vault_rows"]  # vault and mirror purged together
    assert report.rows_purged == before["vault_rows"] - after["vault_rows"]
    kept_after = await vault_counts(deps, kept.id)
    assert kept_after["vault_rows"] == before["vault_rows"]
    assert kept_after["mirror_rows"] == kept_after["vault_rows"]


async def test_stale_buffer_is_flushed_into_a_searchable_chunk(deps: Deps) -> None:
    key, _ = await keys.create_key(deps.db, "idle", NOW)
    note = Message(role="user", content="My locker code at the Porto gym is 4471.", timestamp=NOW - 3 * DAY, id="m1")
    deps.clock = lambda: NOW - 3 * DAY
    await memory.store_conversation(deps, key.id, [note])
    fresh = Message(role="user", content="Another key keeps writing.", timestamp=NOW, id="m2")
    other, _ = await keys.create_key(deps.db, "busy", NOW)
    deps.clock = lambda: NOW - 60
    await memory.store_conversation(deps, other.id, [fresh])
    deps.clock = lambda: NOW
    assert (await vault_counts(deps, key.id))["buffered"] == 1

    report = await run_cron(deps, now=NOW)

    assert report.ok, report.errors
    assert report.buffers_flushed == 1 and report.chunks_flushed >= 1
    counts = await vault_counts(deps, key.id)
    assert counts["buffered"] == 0 and counts["mirror_rows"] == counts["vault_rows"] > 0
    assert (await vault_counts(deps, other.id))["buffered"] == 1


async def test_reconcile_embeds_rows_stored_while_the_embedder_was_down(deps: Deps) -> None:
    key, _ = await keys.create_key(deps.db, "outage", NOW)
    working = deps.embedder
    deps.embedder = _DownEmbedder(working.dimension)
    await memory.store_conversation(deps, key.id, conversation("outage", NOW - 2 * DAY))
    deps.embedder = working
    assert (await vault_counts(deps, key.id))["unembedded"] > 0

    report = await run_cron(deps, now=NOW)

    assert report.ok, report.errors
    assert report.rows_embedded > 0
    assert (await vault_counts(deps, key.id))["unembedded"] == 0


async def test_one_failing_key_does_not_stop_the_others_and_the_report_is_logged(
    deps: Deps, capsys: pytest.CaptureFixture[str]
) -> None:
    healthy, _ = await keys.create_key(deps.db, "healthy", NOW)
    await memory.store_conversation(deps, healthy.id, conversation("old", NOW - 120 * DAY))
    broken, _ = await keys.create_key(deps.db, "broken", NOW)
    real_vaults = deps.vaults

    class FailingFor:
        def vault(self, name: str):  # type: ignore[no-untyped-def]
            if name.startswith(broken.id):
                raise RuntimeError("vault unreachable")
            return real_vaults.vault(name)

    deps.vaults = FailingFor()
    report = await run_cron(deps, "17 3 * * *", now=NOW)

    assert not report.ok
    assert any(broken.id in error and "RuntimeError" in error for error in report.errors)
    assert report.purged_keys == 1 and report.rows_purged > 0
    logged = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert logged["event"] == "memvault.maintenance" and logged["schedule"] == "17 3 * * *"
    assert logged["rows_purged"] == report.rows_purged
    assert "invoice" not in json.dumps(logged)  # counts and ids only, never memory content


class _DownEmbedder:
    """An embedder outage: the port raises, as Workers AI does when it is unavailable."""

    def __init__(self, dimension: int) -> None:
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return "down"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("embedding service unavailable")

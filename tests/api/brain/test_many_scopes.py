"""Thirty brain scopes: every statement stays within D1's 100 bound parameters (the local
database enforces that limit), whatever the number of a credential's scopes, with id lists of
full batches beside the wall."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from local_deps import MakeDeps
from memvault.core import brain
from memvault.core.deps import Deps
from memvault.core.errors import StorageUnavailable

SCOPES = [f"team-{n:02d}" for n in range(30)]


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    return make_deps({
        "MEMVAULT_BRAIN_SCOPES": ",".join(SCOPES),
        "MEMVAULT_BRAIN_CREDENTIALS": json.dumps({
            digest("all"): {"name": "all", "scopes": SCOPES, "writer": True},
            digest("few"): {"name": "few", "scopes": SCOPES[:29], "writer": False},
        }),
    }, clock=lambda: 1_800_000_000.0)


async def test_the_local_database_refuses_a_statement_over_100_parameters(deps: Deps) -> None:
    with pytest.raises(StorageUnavailable):
        await deps.db.query(f"SELECT 1 WHERE 1 IN ({', '.join('?' for _ in range(101))})", list(range(101)))
    assert sqlite3.sqlite_version_info >= (3, 9)


async def test_thirty_scopes_write_search_recall_and_read_within_the_limit(deps: Deps) -> None:
    writer, reader = await brain.auth_of("all", deps), await brain.auth_of("few", deps)
    facts = [{"content": f"Ticket TKT-{n:04d} for the harbour crane was closed by team {n % 30}.",
              "scope": SCOPES[n % 30], "source": f"tickets/{n}"} for n in range(120)]
    written = await brain.WRITE_FACTS.perform(deps, writer, {"facts": facts})
    assert len(written.decisions) == 120
    # Reconcile and supersede by source over more ids than one batch holds.
    again = await brain.WRITE_FACTS.perform(
        deps, writer, {"facts": facts[:90], "source_prefix": "tickets/", "reconcile": True})
    assert again.decisions
    keyword = await brain.SEARCH_FACTS.perform(deps, writer, {"query": "harbour crane", "limit": 100})
    assert len(keyword.results) == 90
    hybrid = await brain.SEARCH_FACTS.perform(deps, reader, {"query": "crane ticket", "mode": "hybrid", "limit": 100})
    assert hybrid.results and all(r.scope != SCOPES[29] for r in hybrid.results)
    envelope = await brain.RECALL.perform(deps, reader, {"query": "harbour crane"})
    assert envelope.facts and all(f.scope in SCOPES[:29] for f in envelope.facts)
    await brain.REGISTER_SKILL.perform(deps, writer, {"slug": "close-ticket", "scope": SCOPES[29], "content": "Close it."})
    assert [s.slug for s in (await brain.LIST_SKILLS.perform(deps, writer, {})).skills] == ["close-ticket"]
    assert (await brain.LIST_SKILLS.perform(deps, reader, {})).skills == []
    # The nightly embedding reads every scope's current rows at once (the 30 scopes are 30 parameters):
    # the 90 facts the reconcile kept and the skill.
    await deps.db.execute("UPDATE memory SET embedded_at = NULL")
    nightly = brain.maintenance_credential(deps.settings)
    assert await brain.embed_pending(deps, nightly, 500) == len(keyword.results) + 1 == 91
    assert await brain.embed_pending(deps, nightly, 500) == 0


async def test_a_scope_outside_the_setting_is_bad_input(deps: Deps) -> None:
    from memvault.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="scope must be one of"):
        await brain.WRITE_FACTS.perform(deps, await brain.auth_of("all", deps), {"content": "x y z", "scope": "business"})

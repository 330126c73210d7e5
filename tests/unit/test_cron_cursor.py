"""The maintenance pass under a budget: each cron invocation does a bounded share, records where it
stopped in the database, and the next one resumes there, until the pass is done for the day."""

from __future__ import annotations

import pytest

from local_deps import MakeDeps
from memvault.core import memory
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.models import Message
from memvault.runtime.cron import run_cron

NOW = 1_800_000_000.0
DAY = 86_400.0


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    return make_deps({"MEMVAULT_CRON_VAULT_BUDGET": "2"}, clock=lambda: NOW)


def said(prefix: str, at: float) -> list[Message]:
    return [Message(role="user", content=f"{prefix}: the ferry to Vigo leaves at {7 + i}.", timestamp=at + i,
                    id=f"{prefix}-{i}") for i in range(3)]


async def test_each_invocation_tends_at_most_its_budget_and_the_next_resumes_after_it(deps: Deps) -> None:
    expected = []
    for n in range(3):
        key, _ = await keys.create_key(deps.db, f"k{n}", NOW)
        await memory.store_conversation(deps, key.id, said(f"old{n}", NOW - 120 * DAY))
        await memory.store_conversation(deps, key.id, said(f"s{n}", NOW - DAY), session_id="trip")
        expected += await memory.vaults_of(deps, key.id)
    tended: list[int] = []
    reports = []
    while not (reports and reports[-1].finished):
        report = await run_cron(deps, now=NOW)
        reports.append(report)
        tended.append(report.vaults_seen)
        assert len(reports) < 20
    assert all(count <= 2 for count in tended) and sum(tended) == len(expected) == 6
    assert reports[0].resumed is False and all(r.resumed for r in reports[1:])
    assert reports[0].stopped_at == f"memory after {sorted(expected)[1]}"
    assert reports[-1].backup["complete"]

    # Later the same day today's pass is done: the invocation reads its cursor and looks in the
    # journal of routed calls for what a crash left, and does nothing else.
    again = await run_cron(deps, now=NOW + 3600)
    assert again.finished and not again.resumed and again.vaults_seen == 0 and again.statements == 2
    tomorrow = await run_cron(deps, now=NOW + DAY)
    assert tomorrow.pass_day != reports[0].pass_day and tomorrow.vaults_seen == 2


async def test_an_unfinished_pass_is_carried_on_the_next_day_before_a_new_one_starts(deps: Deps) -> None:
    for n in range(3):
        key, _ = await keys.create_key(deps.db, f"k{n}", NOW)
        await memory.store_conversation(deps, key.id, said(f"m{n}", NOW - DAY))
    first = await run_cron(deps, now=NOW)
    assert not first.finished and first.vaults_seen == 2
    next_day = await run_cron(deps, now=NOW + DAY)
    assert next_day.resumed and next_day.pass_day == first.pass_day and next_day.vaults_seen == 1


async def test_the_query_budget_stops_a_run_between_vaults(deps: Deps) -> None:
    for n in range(4):
        key, _ = await keys.create_key(deps.db, f"k{n}", NOW)
        await memory.store_conversation(deps, key.id, said(f"m{n}", NOW - DAY))
    deps.settings = deps.settings.replace(cron_vault_budget=100, cron_query_budget=10)
    report = await run_cron(deps, now=NOW)
    assert not report.finished and 1 <= report.vaults_seen < 4
    # Stopped before the next vault once spent: over by at most one vault's statements.
    assert report.statements < 10 + 40

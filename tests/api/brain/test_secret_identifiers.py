"""Identifiers are refused, never redacted: a secret in a fact's source or a skill's slug or scope
is an error before anything is written. Skill text is redacted, and registering a skill is one
atomic batch (skill rows, event, mirrored fact), so a failure leaves nothing half-written."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from brain_env import Brain, brain_fixture  # noqa: F401

from memvault.core.brain import REGISTER_SKILL

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz"
SECRET_SOURCES = [
    "https://app.example.com/callback?token=Q7v9Lm2Xk4Rt8Wp1",
    "notes:db_password=hunter22",
    f"session:{JWT}",
    "maps:AIzaWV1mKaUyvBPs0jSO2Jkf08MMF1ulMMCw3XV",
    "slack:xapp-1-A0123456789-2790321408149-1a1bc7f90d4794d3f706",
    "cards/4111.1111.1111.1111",
    "hr:ssn 536228745",
    "claude:sk-ant-api03-sJqLOJqu3g9DYpQaxEN_cNljiRkV71kDRuIr2jhTxs",
]
# Slugs allow only a-z, 0-9, '.', '_' and '-', and every one of these fits that shape.
SECRET_SLUGS = [
    "4111-1111-1111-1111",
    "123-45-6789",
    "ghp_n8gaw18vjsgj0wu8fxtwxqxni7z9kwrknr4a",
    "sk-proj-3f9a8c7b6d5e4f3a2b1c0d9e",
]


async def _counts(brain: Brain) -> tuple[int, int, int]:
    skills = await brain.deps.db.query("SELECT COUNT(*) AS n FROM skills")
    return int(skills[0]["n"]), await brain.count(), await brain.events()


async def _register(brain: Brain, body: dict[str, Any]) -> Any:
    return await brain.client.post("/memory/skill", json=body, headers=brain.headers("writer"))


@pytest.mark.parametrize("source", SECRET_SOURCES)
async def test_a_secret_in_a_source_is_refused_and_never_echoed(brain: Brain, source: str) -> None:
    response = await brain.client.post("/memory/write", headers=brain.headers("writer"),
                                       json={"content": "quarterly numbers", "source": source, "scope": "business"})
    assert response.status_code == 422
    assert "source looks like it contains a secret" in response.text
    assert source not in response.text
    assert await brain.count() == 0 and await brain.events() == 0


@pytest.mark.parametrize("slug", SECRET_SLUGS)
async def test_a_secret_in_a_slug_is_refused_before_anything_is_written(brain: Brain, slug: str) -> None:
    response = await _register(brain, {"slug": slug, "content": "steps", "scope": "business"})
    assert response.status_code == 422
    assert "slug looks like it contains a secret" in response.text
    assert slug not in response.text
    assert await _counts(brain) == (0, 0, 0)


async def test_a_secret_in_a_scope_is_refused_before_anything_is_written(brain: Brain) -> None:
    response = await _register(brain, {"slug": "deploy", "content": "steps", "scope": "token=Q7v9Lm2Xk4Rt8Wp1"})
    assert response.status_code == 422
    assert "scope looks like it contains a secret" in response.text
    assert "Q7v9Lm2Xk4Rt8Wp1" not in response.text
    assert await _counts(brain) == (0, 0, 0)


async def test_skill_text_is_redacted_in_the_skill_and_in_its_fact(brain: Brain) -> None:
    response = await _register(brain, {
        "slug": "deploy", "scope": "business", "name": "Deploy with password: hunter22",
        "description": "uses AIzaWV1mKaUyvBPs0jSO2Jkf08MMF1ulMMCw3XV", "content": "export DB_PASSWORD=s3cretP@ss"})
    assert response.status_code == 200
    assert response.json()["redacted"] == ["api_key", "password"]
    stored = repr(await brain.deps.db.query("SELECT * FROM skills")) + repr(await brain.deps.db.query("SELECT * FROM memory"))
    for secret in ("hunter22", "AIzaWV1mKaUyvBPs0jSO2Jkf08MMF1ulMMCw3XV", "s3cretP@ss"):
        assert secret not in stored
    assert "[redacted:password]" in stored


class RecordingDatabase:
    """The real database, with every batch remembered, and the first batch that writes ``target``
    broken on demand: ``raise`` fails before anything runs; ``poison`` slips an invalid statement
    into the middle of that batch, so the database itself must roll back what came before it."""

    def __init__(self, inner: Any, breakage: str | None = None, target: str = "INSERT INTO memory") -> None:
        self.inner, self.breakage, self.target = inner, breakage, target
        self.batches: list[list[str]] = []

    async def query(self, sql: str, params: Any = ()) -> Any:
        return await self.inner.query(sql, params)

    async def execute(self, sql: str, params: Any = ()) -> Any:
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        self.batches.append([sql for sql, _ in statements])
        if self.breakage and any(sql.startswith(self.target) for sql, _ in statements):
            if self.breakage == "raise":
                raise RuntimeError("the database went away")
            middle = len(statements) // 2
            statements = [*statements[:middle], ("INSERT INTO no_such_table VALUES (1)", ()), *statements[middle:]]
        await self.inner.batch(statements)


def _with_db(brain: Brain, db: RecordingDatabase) -> Any:
    return dataclasses.replace(brain.deps, db=db)


async def test_registration_is_one_batch_holding_skill_event_and_fact(brain: Brain) -> None:
    db = RecordingDatabase(brain.deps.db)
    await REGISTER_SKILL.perform(_with_db(brain, db), await brain.credential("writer"),
                         {"slug": "weekly", "content": "1. Inbox", "scope": "business"})
    write = db.batches[0]
    assert any(sql.startswith("INSERT INTO skills") for sql in write)
    assert any(sql.startswith("INSERT INTO memory") for sql in write)
    assert sum(sql.startswith("INSERT INTO event_log") for sql in write) == 2
    # What follows is the vectors' bookkeeping and the cache generation only.
    assert all(sql.startswith(("UPDATE memory SET embed_id", "UPDATE fact_passages", "INSERT INTO cache_generations"))
               for batch in db.batches[1:] for sql in batch)


# The mirrored fact is written last in the old two-step registration: breaking its write is a
# failure in the middle of registration.
@pytest.mark.parametrize("breakage", ["raise", "poison"])
@pytest.mark.parametrize("target", ["INSERT INTO memory", "INSERT INTO skills"])
async def test_a_failed_registration_leaves_nothing_half_written(brain: Brain, breakage: str, target: str) -> None:
    db = RecordingDatabase(brain.deps.db, breakage, target)
    with pytest.raises(Exception):  # noqa: B017 - whatever the database raises, nothing may remain
        await REGISTER_SKILL.perform(_with_db(brain, db), await brain.credential("writer"),
                             {"slug": "weekly", "content": "1. Inbox", "scope": "business"})
    assert await _counts(brain) == (0, 0, 0)


async def test_a_failed_update_keeps_the_previous_version_whole(brain: Brain) -> None:
    skill = {"slug": "weekly", "content": "1. Inbox", "scope": "business"}
    assert (await _register(brain, skill)).status_code == 200
    before = await _counts(brain)
    current = await brain.deps.db.query("SELECT id, content FROM memory WHERE superseded_at IS NULL")
    brain.clock.advance(60)
    with pytest.raises(Exception):  # noqa: B017
        await REGISTER_SKILL.perform(_with_db(brain, RecordingDatabase(brain.deps.db, "poison")),
                             await brain.credential("writer"), {**skill, "content": "1. Inbox\n2. Ship"})
    assert await _counts(brain) == before
    assert await brain.deps.db.query("SELECT id, content FROM memory WHERE superseded_at IS NULL") == current
    live = await brain.deps.db.query("SELECT version FROM skills WHERE superseded_at IS NULL")
    assert [row["version"] for row in live] == [1]

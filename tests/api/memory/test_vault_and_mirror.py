"""Vault and mirror stay one memory: clear and purge reach both, and either one alone still answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_support import Memvault
from test_memory_api import DAY, NOW, search, store, turn

from memvault.core.memory.mirror import MirrorStore
from memvault.core.ports import Database


class BrokenVault:
    def __getattr__(self, name: str) -> Any:
        async def fail(*args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("vault unreachable")

        return fail


class BrokenVaults:
    def vault(self, name: str) -> BrokenVault:
        return BrokenVault()


class MirrorDown:
    """The database with every statement on mirror tables failing (keys keep working)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _check(self, sql: str) -> None:
        if "mirror_" in sql:
            raise ConnectionError("mirror unreachable")

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self._check(sql)
        return await self._db.query(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._check(sql)
        return await self._db.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        for sql, _ in statements:
            self._check(sql)
        await self._db.batch(statements)


async def mirror_counts(mv: Memvault, vault: str) -> dict[str, int]:
    return await MirrorStore(mv.deps.db).counts(mv.key_id, f"{mv.key_id}:{vault}")


async def test_search_answers_from_the_mirror_when_the_vault_fails(memvault: Memvault) -> None:
    await store(memvault, [turn(i, NOW - 2 * DAY + i) for i in range(50)])
    await store(memvault, [{"role": "user", "content": "The spare key hides under the heron statue.", "timestamp": NOW}])
    memvault.deps.vaults = BrokenVaults()
    found = await search(memvault, "spare key heron statue")
    assert found["items"][0]["text"] == "The spare key hides under the heron statue."
    assert any("number 33." in i["text"] for i in (await search(memvault, "tomatoes water number 33"))["items"])
    assert found["metrics"]["vaults"][f"{memvault.key_id}:core"]["winner"] == "mirror"


async def test_search_answers_from_the_vault_when_the_mirror_fails(memvault: Memvault) -> None:
    await store(memvault, [turn(i, NOW - 2 * DAY + i) for i in range(50)])
    memvault.deps.db = MirrorDown(memvault.deps.db)
    memvault.deps.tuning = memvault.deps.tuning.replace(mirror_head_start_seconds=0)
    found = await search(memvault, "tomatoes water number 21")
    assert any("number 21." in i["text"] for i in found["items"])
    assert found["metrics"]["vaults"][f"{memvault.key_id}:core"]["winner"] == "vault"


async def test_clear_leaves_nothing_in_vault_mirror_or_mirrored_buffer(memvault: Memvault) -> None:
    await store(memvault, [turn(i, NOW - DAY + i) for i in range(45)])
    await store(memvault, [turn(i, NOW, topic="sessions") for i in range(5)], session="s9")
    assert (await mirror_counts(memvault, "core"))["rows"] > 0
    response = await memvault.client.delete("/v1/memory", headers=memvault.auth)
    assert response.status_code == 200 and response.json()["cleared_vaults"] == 2
    for vault in ("core", "session:s9"):
        assert await mirror_counts(memvault, vault) == {"rows": 0, "buffered_tokens": 0}
        stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:{vault}").stats()
        assert (stats.messages, stats.chunks, stats.buffered_messages) == (0, 0, 0)
    memvault.deps.vaults = BrokenVaults()  # the mirror fallback must not bring anything back
    assert (await search(memvault, "tomatoes water"))["items"] == []
    assert (await search(memvault, "tomatoes sessions", session_id="s9"))["items"] == []


async def test_purge_removes_old_rows_from_vault_and_mirror(memvault: Memvault) -> None:
    await store(memvault, [turn(i, NOW - 200 * DAY + i, topic="ancient") for i in range(45)])
    await store(memvault, [turn(100 + i, NOW - DAY + i, topic="recent") for i in range(45)])
    response = await memvault.client.post("/v1/memory/purge", json={"older_than": NOW - 100 * DAY}, headers=memvault.auth)
    assert response.status_code == 200 and response.json()["rows_deleted"] > 0
    for source in ("vault", "mirror"):
        if source == "mirror":
            memvault.deps.vaults = BrokenVaults()
        texts = [i["text"] for i in (await search(memvault, "ancient tomatoes", limit=50))["items"]]
        assert texts and not any("ancient" in t for t in texts), source


async def test_reset_allows_a_new_embedding_dimension(memvault: Memvault) -> None:
    from memvault.adapters.local.embedder import HashEmbedder

    await store(memvault, [turn(i, NOW - DAY + i) for i in range(45)])
    memvault.deps.embedder = HashEmbedder(dimension=128)
    response = await memvault.client.post("/v1/memory", json={"messages": [turn(i, NOW + i) for i in range(50, 95)]}, headers=memvault.auth)
    assert response.status_code == 409 and "reset" in response.json()["error"]["message"]
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 45
    assert (await memvault.client.delete("/v1/memory", params={"reset": "true"}, headers=memvault.auth)).status_code == 200
    await store(memvault, [turn(i, NOW + i) for i in range(50, 95)])
    assert any("number 60." in i["text"] for i in (await search(memvault, "tomatoes water number 60"))["items"])


async def test_another_model_of_the_same_dimension_is_refused_before_anything_is_written(memvault: Memvault) -> None:
    from memvault.adapters.local.embedder import HashEmbedder

    class OtherModel(HashEmbedder):
        @property
        def model_id(self) -> str:
            return "another-model-same-size"

    await store(memvault, [turn(i, NOW - DAY + i) for i in range(45)])
    before = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    memvault.deps.embedder = OtherModel(dimension=memvault.deps.embedder.dimension)
    response = await memvault.client.post("/v1/memory", json={"messages": [turn(i, NOW + i) for i in range(50, 60)]}, headers=memvault.auth)
    assert response.status_code == 409 and "another-model-same-size" in response.json()["error"]["message"]
    after = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert (after.messages, after.buffered_messages) == (before.messages, before.buffered_messages)

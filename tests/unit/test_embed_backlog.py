"""Rows a crash (or a model that was down) left without a vector are embedded when their batch is
sent again: the client's retry heals what its first try could not finish."""

from __future__ import annotations

from collections.abc import Sequence

from local_deps import MakeDeps
from memvault.core import memory
from memvault.core.memory.names import vault_name
from memvault.core.models import Message
from memvault.core.ports import Embedder


class DownEmbedder:
    """The model, unreachable."""

    def __init__(self, model: Embedder) -> None:
        self.model_id, self.dimension = model.model_id, model.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ConnectionError("the model is down")


async def test_a_batch_sent_again_embeds_what_its_first_store_left_without_vectors(make_deps: MakeDeps) -> None:
    deps = make_deps()
    batch = [Message("user", f"Note {n}: the boat is moored at pier {n}.", float(n), f"m{n}") for n in range(1, 6)]
    model = deps.embedder
    deps.embedder = DownEmbedder(model)  # type: ignore[assignment]
    first = await memory.store_conversation(deps, "k1", batch)
    assert first.messages_accepted == 5
    vault = deps.vaults.vault(vault_name("k1", None))
    assert len(await vault.unembedded(100)) >= 5
    deps.embedder = model
    again = await memory.store_conversation(deps, "k1", batch)
    assert again.messages_accepted == 0
    assert await vault.unembedded(100) == []


async def test_a_new_write_leaves_another_writes_backlog_to_the_nightly_run(make_deps: MakeDeps) -> None:
    deps = make_deps()
    model = deps.embedder
    deps.embedder = DownEmbedder(model)  # type: ignore[assignment]
    await memory.store_conversation(deps, "k1", [Message("user", "The gate code changed.", 1.0, "old")])
    deps.embedder = model
    await memory.store_conversation(deps, "k1", [Message("user", "Lunch at noon.", 2.0, "new")])
    left = await deps.vaults.vault(vault_name("k1", None)).unembedded(100)
    assert [job.id for job in left if job.id == "old" or job.text.startswith("The gate")]
    result = await memory.reconcile_vault(deps, "k1")
    assert result["embedded"] >= 1
    assert await deps.vaults.vault(vault_name("k1", None)).unembedded(100) == []

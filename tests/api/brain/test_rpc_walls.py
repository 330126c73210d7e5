"""The brain's RPC methods (what other Workers call over a service binding) keep the same walls."""

from __future__ import annotations

import pytest
from brain_env import ALL_SCOPES, CREDENTIALS, Brain, brain_fixture, token  # noqa: F401

from memvault.core.errors import Forbidden, Unauthorized
from memvault.runtime import rpc


async def seed(brain: Brain) -> None:
    for scope in ALL_SCOPES:
        await brain.write({"source": f"notes:{scope}", "scope": scope, "facts": [{"content": f"The harbour ledger lists crate {scope}."}]})


@pytest.mark.parametrize("name", sorted(CREDENTIALS))
async def test_rpc_search_and_recall_stay_inside_the_credentials_scopes(brain: Brain, name: str) -> None:
    await seed(brain)
    allowed = set(CREDENTIALS[name][0])
    for mode in ("keyword", "hybrid"):
        found = await rpc.brain_search(brain.deps, token(name), "harbour ledger crate", mode, 20)
        assert {row["scope"] for row in found["results"]} == allowed
    recalled = await rpc.brain_recall(brain.deps, token(name), "harbour ledger crate")
    scopes = {row["scope"] for tier in ("recent", "facts") for row in recalled[tier]}
    assert scopes <= allowed


async def test_rpc_refuses_unknown_tokens_and_readers_that_write(brain: Brain) -> None:
    with pytest.raises(Unauthorized):
        await rpc.brain_search(brain.deps, "tok-nobody", "harbour", None, None)
    with pytest.raises(Forbidden):
        await rpc.brain_write(brain.deps, token("reader-all"), {"source": "x", "scope": "business", "facts": [{"content": "y"}]})
    written = await rpc.brain_write(brain.deps, token("writer"), {"source": "x", "scope": "business", "facts": [{"content": "y"}]})
    assert written


@pytest.mark.parametrize("bad", [["tok-writer"], 7, 7.5, True, None, {"token": "tok-writer"}, b"tok-writer"])
async def test_rpc_answers_any_token_that_is_not_text_with_401(brain: Brain, bad: object) -> None:
    for call in (
        rpc.brain_search(brain.deps, bad, "harbour", None, None),  # type: ignore[arg-type]
        rpc.brain_recall(brain.deps, bad, "harbour"),  # type: ignore[arg-type]
        rpc.brain_write(brain.deps, bad, {"source": "x", "scope": "business", "facts": [{"content": "y"}]}),  # type: ignore[arg-type]
    ):
        with pytest.raises(Unauthorized):
            await call

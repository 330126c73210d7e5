"""Shared by the tests of the brain's bands and consolidation: a scripted judge on 127.0.0.1
(module-scoped), a brain that asks it, a brain without one, and band thresholds that suit the tests'
hash embedder."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from brain_env import Brain, close_brain, open_brain
from fake_llm import FakeLlm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))
from fake_upstream import ServerThread

from memvault.core.tuning import Tuning

# Thresholds for the tests' hash embedder, whose cosine follows shared words.
BANDS = Tuning(brain_block_similarity=0.9, brain_flag_similarity=0.55, brain_candidate_similarity=0.3)


@pytest.fixture(name="llm", scope="module")
def llm_fixture() -> Iterator[tuple[FakeLlm, str]]:
    fake = FakeLlm()
    with ServerThread(fake.app) as server:
        yield fake, server.url


@pytest.fixture(name="judged")
async def judged_fixture(tmp_path: Path, llm: tuple[FakeLlm, str]) -> AsyncIterator[tuple[Brain, FakeLlm]]:
    fake, url = llm
    fake.prompts.clear()
    fake.delay = 0.0
    brain = await open_brain(tmp_path, BANDS, MEMVAULT_BRAIN_LLM_URL=url, MEMVAULT_BRAIN_LLM_MODEL="judge",
                             MEMVAULT_BRAIN_LLM_TIMEOUT_MS="2000")
    yield brain, fake
    await close_brain(brain)


@pytest.fixture(name="plain")
async def plain_fixture(tmp_path: Path) -> AsyncIterator[Brain]:
    brain = await open_brain(tmp_path, BANDS)
    yield brain
    await close_brain(brain)


def ids_in(prompt: str) -> list[str]:
    return re.findall(r"id (mem-[0-9a-f]+|skill-[0-9a-f]+-v[0-9]+)", prompt)


def replying(decision: str, **extra: Any) -> Callable[[str, str], str]:
    """A judge answering ``decision`` about the first candidate it is shown (and rating every fact 4)."""
    def respond(system: str, user: str) -> str:
        if "Rate how important" in system:
            return json.dumps({fid: 4 for fid in ids_in(user)})
        return json.dumps({"decision": decision, "ids": ids_in(user)[:1], **extra})
    return respond

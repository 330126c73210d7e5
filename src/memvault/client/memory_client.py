"""``MemoryClient``: memvault's client interface over one transport, each call bounded by a timeout
and retried with backoff while it fails in a passing way.

Every call is safe to repeat: reads are, and a save is made so before its first try — each message
gets its id and timestamp here, so a save whose answer was lost stores nothing twice when it is
sent again (memvault stores an id once) and keeps the moment it was said, not the moment it
arrived. A brain write is idempotent by its source and text."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.client.transports import Transport
from memvault.core.retry import Backoff, is_transient_call, retry

T = TypeVar("T")

CALL_BACKOFF = Backoff(attempts=3, base_seconds=0.1, max_seconds=1.0)


@dataclass(frozen=True)
class Clockwork:
    """Where the client's time and chance come from: the real ones, or a test's or benchmark's."""

    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep
    rand: Callable[[], float] = random.random


REAL_TIME = Clockwork()


def stamped(messages: Sequence[Mapping[str, Any]], now: float) -> list[dict[str, Any]]:
    """The messages with an id and a timestamp each (the caller's own, where given)."""
    out = []
    for message in messages:
        fixed = dict(message)
        if fixed.get("id") in (None, ""):
            fixed["id"] = uuid.uuid4().hex
        if fixed.get("timestamp") is None:
            fixed["timestamp"] = now
        out.append(fixed)
    return out


class MemoryClient:
    def __init__(
        self,
        transport: Transport,
        *,
        timeout_seconds: float = 10.0,
        backoff: Backoff = CALL_BACKOFF,
        clockwork: Clockwork = REAL_TIME,
    ) -> None:
        self._transport = transport
        self._timeout = timeout_seconds
        self._backoff = backoff
        self._time = clockwork

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(call(), self._timeout)

        return await retry(bounded, is_transient_call, self._backoff, sleep=self._time.sleep, rand=self._time.rand)

    def stamp(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return stamped(messages, self._time.clock())

    async def get(self, session_id: str | None = None, limit: int | None = None, offset: int = 0) -> dict[str, Any]:
        """One page of the session's messages, newest first, as memvault's vault holds them now."""
        return await self._call(lambda: self._transport.get_memory(session_id, limit, offset))

    async def save(
        self,
        session_id: str | None,
        messages: Sequence[Mapping[str, Any]],
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store messages in order; answers as ``POST /v1/memory`` does (``message_ids``, …)."""
        ready = self.stamp(messages)
        return await self._call(lambda: self._transport.save_memory(session_id, ready, metadata))

    async def search(self, query: str, limit: int | None = None, session_id: str | None = None) -> dict[str, Any]:
        """The best items of the key's memory for ``query``: ``{items, tokens, metrics, facts, receipt}``."""
        return await self._call(lambda: self._transport.search_memory(query, limit, session_id))

    async def remember(self, fact: str, *, scope: str, source: str) -> dict[str, Any]:
        """Write one fact to the brain with this client's brain credential."""
        payload = {"fact": fact, "scope": scope, "source": source}
        return await self._call(lambda: self._transport.write_facts(payload))

    async def recall_facts(self, query: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Brain facts matching ``query`` (keyword search), as this client's credential may read them."""
        return await self._call(lambda: self._transport.search_facts(query, limit))

    async def register_skill(self, skill: Mapping[str, Any]) -> dict[str, Any]:
        """Register a skill (``slug``, ``content``, …): the same content again changes nothing, changed
        content becomes its next version."""
        return await self._call(lambda: self._transport.register_skill(skill))

    async def propose_skill(self, *, title: str, triggers: Sequence[str], steps: Sequence[str],
                            source_trail: Sequence[str], scope: str | None = None, slug: str | None = None
                            ) -> dict[str, Any]:
        """Propose a skill learned from finished work: ``{proposal}``, pending, with its ``candidates``
        (skills and facts it may duplicate). Nothing is registered until a writer confirms it; the
        same proposal made again is the stored one."""
        proposal = {"title": title, "triggers": list(triggers), "steps": list(steps),
                    "source_trail": list(source_trail), "scope": scope, "slug": slug}
        payload = {name: value for name, value in proposal.items() if value is not None}
        return await self._call(lambda: self._transport.propose_skill(payload))

    async def skill_proposals(self, status: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """``{proposals}``: pending ones unless ``status`` is confirmed, rejected or all."""
        return await self._call(lambda: self._transport.skill_proposals(status, limit))

    async def confirm_skill_proposal(self, proposal_id: str, version_of: str | None = None) -> dict[str, Any]:
        """Register the proposal (as the next version of the candidate skill ``version_of`` names, if
        given). A confirm whose answer was lost and is sent again is refused as already confirmed."""
        return await self._call(lambda: self._transport.confirm_skill_proposal(proposal_id, version_of))

    async def reject_skill_proposal(self, proposal_id: str, reason: str | None = None) -> dict[str, Any]:
        return await self._call(lambda: self._transport.reject_skill_proposal(proposal_id, reason))

    async def retire_fact(self, fact_id: str, reason: str) -> dict[str, Any]:
        """Retire a brain fact by hand (a writer credential): ``{id, status, retirement}``."""
        return await self._call(lambda: self._transport.retire_fact(fact_id, reason))

"""``LazyMemory``: the memory a Durable Object agent holds for one conversation, built so that
memvault can never stall the agent.

- Constructing it does nothing but keep its arguments: no storage, no network. A memory call in a
  Durable Object's constructor runs inside ``blockConcurrencyWhile``, and one that hangs there past
  its 30 s limit resets the object.
- ``get()`` answers at once with what the agent holds (the last view it kept in its own storage,
  empty the first time) and schedules the fetch; once the fetch is in, ``get()`` answers with it.
- ``save()`` stamps the messages (id, timestamp), queues them in the agent's own storage, and
  returns. ``flush()`` sends what is queued, in order and batched, as background work
  (``ctx.waitUntil`` on Workers); it returns a future the caller may await or ignore.
- A save is removed from the queue only once memvault acknowledged it; a queue left by an evicted
  instance is sent on the next start. While memvault fails, reads answer from what the agent holds
  with ``degraded`` set, and saves stay queued, tried again after a growing, jittered wait; memvault
  refusing a save for good (bad input, a conflicting id) sets it aside instead of blocking the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.client.memory_client import REAL_TIME, Clockwork, MemoryClient
from memvault.client.outbox import Outbox, QueuedSave
from memvault.core.errors import MemvaultError
from memvault.core.ports import BackgroundTasks, SyncSql
from memvault.core.retry import Backoff

log = logging.getLogger(__name__)

QUEUE_BACKOFF = Backoff(base_seconds=0.5, max_seconds=60.0)
# Statuses that will not change however often the same save is sent.
REFUSED_FOR_GOOD = frozenset({400, 409, 413, 422})


@dataclass(frozen=True)
class Recall:
    messages: tuple[dict[str, Any], ...]  # oldest first
    fresh: bool  # memvault's own answer, fetched since this agent started, is in it
    degraded: bool  # memvault could not be read: this is only what the agent itself holds
    queued: int  # saves waiting for memvault's acknowledgement


@dataclass(frozen=True)
class Delivery:
    delivered: int  # saves memvault acknowledged in this round
    queued: int  # saves still waiting
    refused: int  # saves set aside in this round
    error: str | None  # while saves still wait: the kind of the last failure to send them


class LazyMemory:
    def __init__(
        self,
        client: MemoryClient,
        store: SyncSql,
        background: BackgroundTasks,
        session_id: str | None = None,
        *,
        view_size: int = 50,
        batch_messages: int = 100,
        backoff: Backoff = QUEUE_BACKOFF,
        delivery_budget_seconds: float = 20.0,
        clockwork: Clockwork = REAL_TIME,
    ) -> None:
        self._client = client
        self._outbox = Outbox(store)
        self._background = background
        self._session_id = session_id
        self._view_size = view_size
        self._batch_messages = batch_messages
        self._backoff = backoff
        self._budget = delivery_budget_seconds
        self._clock, self._sleep, self._rand = clockwork.clock, clockwork.sleep, clockwork.rand
        self._view: list[dict[str, Any]] | None = None
        self._started = False
        self._fresh = False
        self._degraded = False
        self._fetching = False
        self._fetched: asyncio.Event | None = None
        self._fetch_failures = 0
        self._fetch_after = 0.0
        self._saved_while_fetching: list[dict[str, Any]] = []
        self._send_failures = 0
        self._send_after = 0.0
        self._send_error: str | None = None
        self._delivery: asyncio.Future[Delivery] | None = None

    def get(self) -> Recall:
        """What the agent knows of the conversation, at once; the first call (and a call after a
        failed fetch, once its wait is over) schedules a fetch from memvault."""
        view = self._loaded()
        if not self._started:
            self._started = True
            if self._outbox.pending_count():
                self.flush()  # saves an earlier instance queued and never saw acknowledged
        if not self._fresh and not self._fetching and self._clock() >= self._fetch_after:
            self._fetching = True
            self._fetched = asyncio.Event()
            self._saved_while_fetching = []
            self._background.run(self._fetch)
        return Recall(tuple(view), self._fresh, self._degraded, self._outbox.pending_count())

    async def fresh(self, timeout_seconds: float) -> Recall:
        """``get()``, after waiting at most ``timeout_seconds`` for memvault's answer: for a caller
        that can spend a short wait for fresh data, and answers with what it holds after it."""
        recall = self.get()
        if recall.fresh or self._fetched is None:
            return recall
        with contextlib.suppress(TimeoutError):  # past the wait, what the agent holds is the answer
            await asyncio.wait_for(self._fetched.wait(), timeout_seconds)
        return self.get()

    def save(self, messages: Sequence[Mapping[str, Any]], metadata: Mapping[str, Any] | None = None) -> list[str]:
        """Queue messages for memvault (sent by ``flush``); returns their ids."""
        ready = self._client.stamp(messages)
        remembered = [m for m in ready if m.get("memory", True) is not False]
        view = self._trimmed([*self._loaded(), *remembered])
        self._outbox.queue(self._session_id, ready, metadata, self._clock(), view)
        self._view = view
        self._saved_while_fetching.extend(remembered)
        return [str(m["id"]) for m in ready]

    def flush(self) -> asyncio.Future[Delivery]:
        """Send every queued save as background work; the future settles when this round ends."""
        if self._delivery is None or self._delivery.done():
            done: asyncio.Future[Delivery] = asyncio.get_running_loop().create_future()
            self._delivery = done
            self._background.run(lambda: self._deliver(done))
        return self._delivery

    def _loaded(self) -> list[dict[str, Any]]:
        if self._view is None:
            self._view = self._outbox.view(self._session_id) or []
        return self._view

    def _trimmed(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        unique = list({str(m["id"]): m for m in messages}.values())
        return unique[-self._view_size :]

    async def _fetch(self) -> None:
        try:
            page = await self._client.get(self._session_id, self._view_size)
        except Exception as exc:
            self._fetch_failures += 1
            self._degraded = True
            self._fetch_after = self._clock() + self._backoff.delay(self._fetch_failures, self._rand)
            log.warning("memvault read failed, answering from the agent's own view: %s", type(exc).__name__)
            return
        finally:
            self._fetching = False
            if self._fetched is not None:
                self._fetched.set()
        fetched = list(reversed(page["items"]))
        known = {str(m["id"]) for m in fetched}
        # Saves memvault has not shown yet: still queued, or sent while the page was being read.
        local = [*self._outbox.pending_messages(self._session_id), *self._saved_while_fetching]
        view = self._trimmed([*fetched, *(m for m in local if str(m["id"]) not in known)])
        self._outbox.keep_view(self._session_id, view)
        self._view, self._fresh, self._degraded, self._fetch_failures = view, True, False, 0

    async def _deliver(self, done: asyncio.Future[Delivery]) -> None:
        started = self._clock()
        delivered = refused = 0
        try:
            while (batch := self._outbox.next_batch(self._batch_messages)) is not None:
                wait = self._send_after - self._clock()
                if wait > 0:
                    if self._clock() + wait - started > self._budget:
                        break  # left queued: the next flush (or the next start) sends it
                    await self._sleep(wait)
                if await self._send(batch):
                    delivered += len(batch.seqs)
                elif self._send_error is None:
                    refused += len(batch.seqs)
        finally:
            if not done.done():
                queued = self._outbox.pending_count()
                done.set_result(Delivery(delivered, queued, refused, self._send_error if queued else None))

    async def _send(self, batch: QueuedSave) -> bool:
        """Send one batch; whether memvault acknowledged it (if not, it is either set aside for
        good or kept queued, with the failure's kind in ``_send_error``)."""
        try:
            await self._client.save(batch.session_id, batch.messages, batch.metadata)
        except Exception as exc:
            kind = type(exc).__name__
            if isinstance(exc, MemvaultError) and exc.status in REFUSED_FOR_GOOD:
                self._outbox.refused(batch, f"{kind} ({exc.status})")
                log.warning("memvault refused a queued save for good (%s); it is set aside", kind)
                self._send_error = None
                return False
            self._send_failures += 1
            self._send_after = self._clock() + self._backoff.delay(self._send_failures, self._rand)
            self._send_error = kind
            log.warning("memvault save failed, kept queued: %s", kind)
            return False
        self._outbox.delivered(batch)
        self._send_failures, self._send_after, self._send_error = 0, 0.0, None
        return True

"""The brain's side of the read cache (``core/read_cache.py``): one generation per scope, moved in
the same batch as every write to that scope (facts, their supersession, their vectors), and the
cached reads — recall envelopes and searches — keyed by the generations of the scopes the reader
may see, so a write is seen by the next read whoever makes it."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeVar, cast

from memvault.core.brain.scopes import Credential
from memvault.core.brain.wire import from_plain, to_plain
from memvault.core.deps import Deps
from memvault.core.read_cache import bump_generations, generations
from memvault.core.sql import Statement

log = logging.getLogger(__name__)


def _name(scope: str) -> str:
    return f"brain:{scope}"


def bumps(scopes: Iterable[str]) -> list[Statement]:
    """Statements moving each scope's generation on: add them to the write's own batch."""
    return bump_generations([_name(scope) for scope in sorted(set(scopes))])


class Answer(Protocol):
    @property
    def degraded(self) -> list[str]: ...


A = TypeVar("A", bound=Answer)


async def cached_read(
    deps: Deps,
    credential: Credential,
    namespace: str,
    command: object,
    answer_type: type[A],
    compute: Callable[[], Awaitable[A]],
) -> A:
    """``compute()``'s answer to ``command``, from the read cache while the reader's scopes have
    not been written since; a degraded answer (a channel missing) is never kept."""
    scopes = list(credential.ordered_scopes)
    try:
        current = await generations(deps.db, [_name(scope) for scope in scopes])
    except Exception as exc:  # without the generations the answer cannot be matched to a cached one
        log.warning("brain generations unknown, reading uncached: %s", type(exc).__name__)
        return await compute()
    key = [credential.name, scopes, current, to_plain(command)]
    return await deps.reads.read(
        namespace, key, compute, encode=lambda answer: json.dumps(to_plain(answer)),
        decode=lambda raw: cast(A, from_plain(answer_type, json.loads(raw))), keep=lambda answer: not answer.degraded)

"""What a call of conversation memory used, as the usage ledger counts it (``core/usage``): one
``CallUsage`` value per call, built here from what the call did. A routed call's goes into its
journal's settling batch, a search's into its receipt's batch; a store's rides the vault writes
that take its messages and their vectors (``meter.usage_note``), reaching the ledger in the batch that
mirrors those writes (``MirrorStore.apply``). What has no such batch is added in the background."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

from memvault.core.deps import Deps
from memvault.core.models import Message
from memvault.core.tokens import estimate_tokens
from memvault.core.usage.ledger import add_usage
from memvault.core.usage.meter import CallUsage

log = logging.getLogger("memvault.usage")


def stored_usage(messages: Sequence[Message]) -> CallUsage:
    return CallUsage(messages_stored=len(messages), tokens_stored=sum(estimate_tokens(m.content) for m in messages))


async def account(deps: Deps, key_id: str, model: str | None, usage: CallUsage) -> None:
    """Add ``usage`` to the key's day; a failure is logged (the call itself already answered)."""
    try:
        await add_usage(deps.db, key_id, deps.clock(), model, usage)
    except Exception as exc:
        log.warning("recording usage failed: %s", type(exc).__name__)


def account_later(deps: Deps, key_id: str, model: str | None, usage: CallUsage) -> None:
    """``account`` as background work, off the call's path."""
    deps.background.run(functools.partial(account, deps, key_id, model, usage))

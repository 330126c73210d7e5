"""Which vaults a key has, as the mirror registers them (the write path registers each vault with
its first write)."""

from __future__ import annotations

import logging

from memvault.core.deps import Deps
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.names import vault_name

log = logging.getLogger(__name__)


async def all_vaults(deps: Deps) -> list[tuple[str, str]]:
    """Every registered (key id, vault name)."""
    return await MirrorStore(deps.db).all_vaults()


async def idle_vaults(deps: Deps, key_id: str, idle_before: float) -> list[str]:
    """Vaults of the key whose pending buffer was last written before ``idle_before``."""
    return await MirrorStore(deps.db).idle_buffers(key_id, idle_before)


async def vaults_of(deps: Deps, key_id: str) -> list[str]:
    """Names of every vault the key has (its core vault always among them)."""
    return await MirrorStore(deps.db).vaults_of(key_id)


async def written(deps: Deps, key_id: str, session_id: str | None) -> bool:
    """Whether a read must ask the vault: a session vault nothing was written to is not asked, so
    reading any number of new session ids opens and creates nothing."""
    if session_id is None:
        return True
    try:
        return await MirrorStore(deps.db).registered(key_id, vault_name(key_id, session_id))
    except Exception as exc:  # the vault itself still answers
        log.warning("vault registry unavailable: %s", type(exc).__name__)
        return True

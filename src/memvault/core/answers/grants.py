"""A memory key's brain grant as a brain credential: the same walls a brain credential of those
scopes meets, since every brain read it makes binds the credential's scopes into its SQL."""

from __future__ import annotations

from memvault.core.brain.scopes import Credential
from memvault.core.credentials.keys import MemoryKey
from memvault.core.settings import Settings


def credential_of(key: MemoryKey, settings: Settings) -> Credential | None:
    """The credential ``key``'s grant amounts to: the granted scopes the deployment still has (a
    scope removed from ``MEMVAULT_BRAIN_SCOPES`` is gone from the grant too); None for a key
    granted none, which then reads no brain at all."""
    scopes = frozenset(key.brain_scopes) & frozenset(settings.brain_scopes)
    if not scopes:
        return None
    return Credential(name=key.label or key.id, scopes=scopes, writer=key.brain_writer)

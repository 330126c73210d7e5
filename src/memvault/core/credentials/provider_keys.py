"""Provider keys held for memory keys: at most one per provider (OpenAI, Anthropic, Gemini) for
each memory key, sealed under the deployment's ``MEMVAULT_PROVIDER_KEY_SECRET`` (``sealing.py``)
and bound to their row, so a ciphertext copied to another key or provider does not open. The
memory router forwards a call that carries no provider credential of its own with the stored key
(``key_for_call``). A stored key is never returned: a listing shows its provider, when it was
set and at most its last four characters. Without the secret nothing can be stored; listing and
deleting still work, so an operator can clean up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.credentials import keys
from memvault.core.credentials.sealing import SealingSecret, seal, sealing_secret, unseal, version_of
from memvault.core.deps import Deps
from memvault.core.errors import NotConfigured, NotFound

PROVIDERS = ("openai", "anthropic", "gemini")
SECRET_SETTING = "MEMVAULT_PROVIDER_KEY_SECRET"
# A shorter key (a local server's placeholder) shows none of its characters in a listing.
SHOWN_TAIL_FROM_CHARS = 12
ACTIVE_MEMORY_KEY = "EXISTS (SELECT 1 FROM memory_keys WHERE id = ? AND kind = 'memory' AND revoked_at IS NULL)"


@dataclass(frozen=True)
class ProviderKey:
    provider: str
    created_at: float
    last4: str


def enabled(deps: Deps) -> bool:
    return bool(deps.settings.provider_key_secret) and deps.cipher is not None


def _secrets(deps: Deps) -> list[SealingSecret]:
    """The current sealing secret first, then the earlier ones still read."""
    if not enabled(deps):
        raise NotConfigured(f"provider keys cannot be stored: {SECRET_SETTING} is not set on this deployment")
    settings = deps.settings
    return [sealing_secret(text) for text in (settings.provider_key_secret, *settings.provider_key_old_secrets)]


def _binding(key_id: str, provider: str) -> tuple[str, str]:
    return ("provider_keys", f"{key_id}/{provider}")


def tail_of(api_key: str) -> str:
    return api_key[-4:] if len(api_key) >= SHOWN_TAIL_FROM_CHARS else ""


async def _require_memory_key(deps: Deps, key_id: str) -> None:
    if await keys.active_row(deps.db, "memory", "id", key_id) is None:
        raise NotFound(f"no active memory key {key_id}")


async def set_key(deps: Deps, key_id: str, provider: str, api_key: str,
                  also: Sequence[keys.Statement] = ()) -> ProviderKey:
    """Store (or replace) ``key_id``'s key for ``provider``; ``also`` lands in the same batch and
    only while the memory key is active, as the key does."""
    current = _secrets(deps)[0]
    await _require_memory_key(deps, key_id)
    assert deps.cipher is not None  # _secrets refuses without one
    sealed = await seal(deps.cipher, current, api_key, _binding(key_id, provider))
    now, tail = deps.clock(), tail_of(api_key)
    upsert: keys.Statement = (
        "INSERT INTO provider_keys (key_id, provider, sealed, last4, created_at) SELECT ?, ?, ?, ?, ? "
        f"WHERE {ACTIVE_MEMORY_KEY} ON CONFLICT (key_id, provider) DO UPDATE SET "
        "sealed = excluded.sealed, last4 = excluded.last4, created_at = excluded.created_at",
        (key_id, provider, sealed, tail, now, key_id),
    )
    await deps.db.batch([*also, upsert])
    if not await deps.db.query("SELECT 1 FROM provider_keys WHERE key_id = ? AND provider = ? AND sealed = ?",
                               (key_id, provider, sealed)):
        raise NotFound(f"no active memory key {key_id}")  # revoked while this was sealed
    return ProviderKey(provider, now, tail)


async def delete_key(deps: Deps, key_id: str, provider: str, also: Sequence[keys.Statement] = ()) -> None:
    """Delete ``key_id``'s key for ``provider``: ``NotFound`` when none is stored."""
    if not await deps.db.query("SELECT 1 FROM provider_keys WHERE key_id = ? AND provider = ?", (key_id, provider)):
        raise NotFound(f"no {provider} key is stored for {key_id}")
    await deps.db.batch([*also, ("DELETE FROM provider_keys WHERE key_id = ? AND provider = ?", (key_id, provider))])


async def list_keys(deps: Deps, key_id: str) -> list[ProviderKey]:
    """The providers ``key_id`` has a key stored for, in ``PROVIDERS`` order."""
    await _require_memory_key(deps, key_id)
    rows = await deps.db.query("SELECT provider, created_at, last4 FROM provider_keys WHERE key_id = ?", (key_id,))
    found = {str(row["provider"]): ProviderKey(str(row["provider"]), float(row["created_at"]), str(row["last4"]))
             for row in rows}
    return [found[provider] for provider in PROVIDERS if provider in found]


async def key_for_call(deps: Deps, key_id: str, provider: str) -> str | None:
    """The key stored for ``key_id`` and ``provider``, opened, for one routed call; None where none
    is stored. ``Undecryptable`` when the stored value does not open (altered, or sealed under a
    secret the deployment no longer has); ``NotConfigured`` when one is stored and this process has no
    secret to open it with: forwarded without it, the call would meet the provider's refusal with no
    word why."""
    rows = await deps.db.query("SELECT sealed FROM provider_keys WHERE key_id = ? AND provider = ?",
                               (key_id, provider))
    if not rows:
        return None
    if not enabled(deps):
        raise NotConfigured(f"a {provider} key is stored for this memory key, but this server has no "
                            f"{SECRET_SETTING} to open it: start it with that secret, or send the provider's key with the call")
    assert deps.cipher is not None  # enabled() says so
    return await unseal(deps.cipher, _secrets(deps), str(rows[0]["sealed"]), _binding(key_id, provider))


async def reseal_all(deps: Deps, also: Sequence[keys.Statement] = ()) -> tuple[int, str]:
    """Seal every stored key sealed under an earlier secret again under the current one; the
    number resealed and the current secret's version. A key that opens under none of the secrets
    stops the run before anything is written (``Undecryptable``), so no key is lost half-way."""
    known = _secrets(deps)
    current = known[0]
    assert deps.cipher is not None  # _secrets refuses without one
    rows = await deps.db.query("SELECT key_id, provider, sealed FROM provider_keys ORDER BY key_id, provider")
    updates: list[keys.Statement] = []
    for row in rows:
        sealed, binding = str(row["sealed"]), _binding(str(row["key_id"]), str(row["provider"]))
        if version_of(sealed) == current.version:
            continue
        again = await seal(deps.cipher, current, await unseal(deps.cipher, known, sealed, binding), binding)
        updates.append(("UPDATE provider_keys SET sealed = ? WHERE key_id = ? AND provider = ? AND sealed = ?",
                        (again, row["key_id"], row["provider"], sealed)))
    await deps.db.batch([*also, *updates])
    return len(updates), current.version


def forget_all(key_id: str) -> keys.Statement:
    """The statement that deletes every provider key of ``key_id`` (when the key is revoked)."""
    return "DELETE FROM provider_keys WHERE key_id = ?", (key_id,)

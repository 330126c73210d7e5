"""Vault naming: one vault per (memory key, vault), a core vault and optional session vaults."""

from __future__ import annotations


def vault_name(key_id: str, session_id: str | None) -> str:
    return f"{key_id}:core" if session_id is None else f"{key_id}:session:{session_id}"


def session_of(name: str) -> str | None:
    _, _, rest = name.partition(":")
    return rest.removeprefix("session:") if rest.startswith("session:") else None

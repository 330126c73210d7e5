"""What `/health` reports: which platform pieces are present, never their values.

A composition root describes its platform in a ``PlatformReport`` (the Workers root from the
Worker's ``env``; the local root has no platform report). The health verdict is computed here so
every surface (HTTP, safe deploy, tests) agrees on what "healthy" means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlatformReport:
    """Presence booleans only: a secret's value must never reach this object."""

    runtime: str
    bindings: Mapping[str, bool] = field(default_factory=dict)
    secrets: Mapping[str, bool] = field(default_factory=dict)
    cron_triggers: int = 0
    crons: tuple[str, ...] = ()
    # The Worker version answering (its version-metadata binding), so a deploy can tell which of two
    # versions a request reached; None where the platform says nothing.
    version_id: str | None = None
    # Retired variables the deployment still sets: named so an operator removes them, never a
    # reason to answer 503 (what they once set now has another home, docs/settings.md).
    retired_settings: tuple[str, ...] = ()

    @property
    def missing(self) -> list[str]:
        gone = [f"binding:{name}" for name, present in self.bindings.items() if not present]
        gone += [f"secret:{name}" for name, present in self.secrets.items() if not present]
        if self.cron_triggers < 1:
            gone.append("cron_triggers")
        return gone


def presence(names: Iterable[str], lookup: Mapping[str, Any]) -> dict[str, bool]:
    """Map each name to whether ``lookup`` holds a non-empty value for it."""
    return {name: _present(lookup.get(name)) for name in names}


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return value.strip() != ""
    return True


@dataclass(frozen=True)
class HealthReport:
    version: str
    platform: PlatformReport | None

    @property
    def healthy(self) -> bool:
        return self.platform is None or not self.platform.missing

    @property
    def http_status(self) -> int:
        return 200 if self.healthy else 503

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": "ok" if self.healthy else "degraded", "version": self.version}
        if self.platform is None:
            body.update(runtime="local", version_id=None, bindings={}, secrets={}, cron_triggers=0, crons=[], missing=[])
            return body
        body.update(
            runtime=self.platform.runtime,
            version_id=self.platform.version_id,
            bindings=dict(self.platform.bindings),
            secrets=dict(self.platform.secrets),
            cron_triggers=self.platform.cron_triggers,
            crons=list(self.platform.crons),
            missing=self.platform.missing,
            retired_settings=list(self.platform.retired_settings),
        )
        return body

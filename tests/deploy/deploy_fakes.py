"""The deploy tests' stand-ins, shared by conftest fixtures and tests (a uniquely named module,
so importing it never picks up another folder's conftest)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OVERRIDE = "Cloudflare-Workers-Version-Overrides"


@dataclass
class HealthServer:
    """Answers GET /<site>/health with whatever the test put in ``sites[site]``. A request to
    /live carrying a version-override header is answered from ``sites["candidate"]`` instead, the
    way Cloudflare routes it to the 0% version it names."""

    base_url: str
    sites: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    hang_seconds: dict[str, float] = field(default_factory=dict)
    overrides_seen: list[str] = field(default_factory=list)

    def url(self, site: str) -> str:
        return f"{self.base_url}/{site}"


@dataclass
class FakeWrangler:
    """The calls a fake pywrangler received, and whether bare wrangler was ever called instead."""

    log: Path
    bare_log: Path

    def entries(self) -> list[Any]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def calls(self) -> list[list[str]]:
        return [entry for entry in self.entries() if isinstance(entry, list)]

    def synced_before(self, command: list[str]) -> bool:
        """Whether pywrangler vendored python_modules/ right before running ``command``."""
        entries = self.entries()
        return any(entry == command and i > 0 and isinstance(entries[i - 1], dict) for i, entry in enumerate(entries))

    def bare_wrangler_calls(self) -> list[str]:
        return self.bare_log.read_text().splitlines() if self.bare_log.exists() else []

    def deploys(self) -> list[list[str]]:
        return [call[2:] for call in self.calls() if call[:2] == ["versions", "deploy"]]

    def promoted(self, version_id: str) -> bool:
        """Whether any deployment gave ``version_id`` a share of traffic."""
        return any(
            spec.startswith(f"{version_id}@") and not spec.endswith("@0%") for specs in self.deploys() for spec in specs
        )

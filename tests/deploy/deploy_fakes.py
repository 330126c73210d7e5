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
    log: Path

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def deploys(self) -> list[list[str]]:
        return [call[2:] for call in self.calls() if call[:2] == ["versions", "deploy"]]

    def promoted(self, version_id: str) -> bool:
        """Whether any deployment gave ``version_id`` a share of traffic."""
        return any(
            spec.startswith(f"{version_id}@") and not spec.endswith("@0%") for specs in self.deploys() for spec in specs
        )

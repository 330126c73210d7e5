"""The deploy tests' stand-in for Cloudflare: one state file that the fake `npx wrangler` changes
(deployments, uploads, rollbacks) and that a /health server on 127.0.0.1 answers from, routing a
request as Cloudflare does: to the version a version-override header names when that version is in
the deployment (unless the test says overrides are not applied yet), else to the version with the
most traffic."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OVERRIDE = "Cloudflare-Workers-Version-Overrides"
CURRENT = "0b1d2e3f-0000-4000-8000-000000000001"
NEW = "3f2a9c1e-0000-4000-8000-00000000abcd"
CRONS = ["17,47 3-5 * * *"]
REQUIRED = "MEMVAULT_BRAIN_CREDENTIALS"


def healthy_body(**changes: Any) -> dict[str, Any]:
    return {"status": "ok", "version": "0.1.0", "runtime": "workers", "bindings": {"DB": True},
            "secrets": {REQUIRED: True}, "cron_triggers": len(CRONS), "crons": CRONS, "missing": [], **changes}


@dataclass
class FakeCloudflare:
    state_file: Path
    # version -> (status, body) its /health answers; version_id is filled in by the server
    health: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    overrides_applied: bool = True
    unhealthy_when_live: set[str] = field(default_factory=set)
    overrides_seen: list[str] = field(default_factory=list)
    base_url: str = ""

    def reset(self, secrets: list[str], fail: str | None = None) -> None:
        self.write({"secrets": secrets, "deployment": {CURRENT: 100.0}, "next_version": NEW, "fail": fail, "calls": []})
        self.health = {CURRENT: (200, healthy_body()), NEW: (200, healthy_body())}

    def read(self) -> dict[str, Any]:
        return dict(json.loads(self.state_file.read_text()))

    def write(self, state: dict[str, Any]) -> None:
        temporary = self.state_file.with_suffix(".tmp")
        temporary.write_text(json.dumps(state))
        os.replace(temporary, self.state_file)

    def calls(self) -> list[list[str]]:
        return list(self.read()["calls"])

    def commands(self) -> list[str]:
        return [" ".join(call[:2]) for call in self.calls()]

    def deployment(self) -> dict[str, float]:
        return dict(self.read()["deployment"])

    def answer(self, override: str | None) -> tuple[int, dict[str, Any]]:
        deployment = self.deployment()
        version = max(deployment, key=lambda v: deployment[v])
        named = override.split("=", 1)[1].strip('"') if override and "=" in override else None
        if named is not None:
            self.overrides_seen.append(override or "")
            if self.overrides_applied and named in deployment:
                version = named
        status, body = self.health[version]
        if named is None and version in self.unhealthy_when_live:
            status, body = 503, healthy_body(status="degraded", missing=["binding:DB"], bindings={"DB": False})
        return status, {**body, "version_id": version}

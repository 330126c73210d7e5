"""The scheduled handler: one cron trigger runs all maintenance and logs what it did.

``run_cron`` takes built deps, so the local CLI or a test can run the same nightly work; the
Workers entry calls ``on_scheduled`` with its ``(env, ctx)``.
"""

from __future__ import annotations

import json
from typing import Any

from memvault.core.deps import Deps
from memvault.core.maintenance import MaintenanceReport, run_maintenance


async def run_cron(deps: Deps, schedule: str | None = None, now: float | None = None) -> MaintenanceReport:
    report = await run_maintenance(deps, now=now)
    # Counts, key ids and error types only: a maintenance report never carries memory content.
    print(json.dumps({"event": "memvault.maintenance", "schedule": schedule, **report.to_dict()}, sort_keys=True))
    return report


async def on_scheduled(env: Any, ctx: Any, schedule: str | None) -> MaintenanceReport:
    from memvault.runtime.workers import build_deps

    return await run_cron(build_deps(env, ctx), schedule)

"""The scheduled handler: each cron invocation carries the maintenance pass on within its budget
and logs what it did and where it stopped.

``run_cron`` takes built deps, so the local CLI or a test can run the same nightly work; the
Workers entry calls ``on_scheduled`` with its ``(env, ctx)``.
"""

from __future__ import annotations

import json
from typing import Any

from memvault.core.deps import Deps
from memvault.core.operations.maintenance import MaintenanceReport, run_maintenance


async def run_cron(
    deps: Deps, schedule: str | None = None, now: float | None = None, new_pass: bool = False
) -> MaintenanceReport:
    report = await run_maintenance(deps, now=now, new_pass=new_pass)
    # Counts, key ids and error types only: a maintenance report never carries memory content.
    print(json.dumps({"event": "memvault.maintenance", "schedule": schedule, **report.to_dict()}, sort_keys=True))
    return report


async def on_scheduled(env: Any, ctx: Any, schedule: str | None) -> MaintenanceReport:
    from memvault.runtime.workers import build_deps

    return await run_cron(build_deps(env, ctx), schedule)

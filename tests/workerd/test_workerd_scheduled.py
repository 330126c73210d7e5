"""The nightly cron in real workerd, run through wrangler's scheduled-handler URL: its JSON report
in the Worker's log, the backup it writes to R2, and a routed call a killed isolate left in the
journal, settled."""

from __future__ import annotations

import json
from typing import Any

from test_workerd_journal import check_settled, leave_a_row, usage_total
from tier_stack import MainStack
from wrangler_dev import wait_for


def test_the_scheduled_handler_reports_settles_the_journal_and_writes_a_backup_to_r2(stack: MainStack) -> None:
    stored = stack.api("POST", "/v1/memory", stack.secrets.memory_key,
                       json={"messages": [{"role": "user", "content": "Back this up, please."}]})
    assert stored.status_code == 200, stored.text
    left, usage = leave_a_row(stack), usage_total(stack)
    before = len(stack.memvault.json_lines("memvault.maintenance"))
    ran = stack.api("GET", "/cdn-cgi/handler/scheduled", params={"cron": "17 3 * * *"})
    assert ran.status_code == 200, ran.text

    def report() -> dict[str, Any] | None:
        found = stack.memvault.json_lines("memvault.maintenance")
        return found[before] if len(found) > before else None

    done = wait_for("the cron's JSON report in the Worker's log", report, 120)
    assert done["ok"] is True and done["errors"] == [] and done["schedule"] == "17 3 * * *"
    assert done["calls_settled"] == 1
    check_settled(stack, left, usage)
    backup = done["backup"]
    assert backup["complete"] is True and backup["parts"] >= 1 and backup["rows"]["memory_keys"] >= 3

    bucket = next(b["bucket_name"] for b in stack.settings["r2_buckets"] if b["binding"] == "BODIES")
    index = json.loads(stack.wrangler(["r2", "object", "get", f"{bucket}/backups/index.json", "--local", "--pipe"]))
    assert backup["backup_id"] in json.dumps(index)
    part = stack.wrangler(["r2", "object", "get", f"{bucket}/backups/{backup['backup_id']}/part-00001.jsonl",
                           "--local", "--pipe"])
    lines = [json.loads(line) for line in part.splitlines() if line.strip()]
    assert lines[0]["backup"]["id"] == backup["backup_id"]
    assert any(line.get("table") == "memory_keys" for line in lines[1:])

#!/usr/bin/env python3
"""Stands in for `pywrangler` in the safe-deploy tests: records each call, plays back a scenario.
Like pywrangler, it syncs python_modules/ before the commands that upload code (`deploy`,
`versions`) and says so in the log, as {"sync": command}; the real sync needs the internet.

FAKE_WRANGLER_LOG      file that receives one JSON line (the argv) per call
FAKE_WRANGLER_PREVIEW  preview URL reported by `versions upload`; unset or empty: none, as for
                       a Worker that implements a Durable Object
FAKE_WRANGLER_FAIL     "upload" makes `versions upload` fail; "status" makes `deployments status`
                       fail as it does for a Worker that was never deployed
"""

import json
import os
import sys

VERSION_ID = "3f2a9c1e-0000-4000-8000-00000000abcd"
CURRENT_ID = "0b1d2e3f-0000-4000-8000-000000000001"


def main() -> int:
    args = sys.argv[1:]
    with open(os.environ["FAKE_WRANGLER_LOG"], "a") as log:
        if args[:1] in (["deploy"], ["versions"]):
            log.write(json.dumps({"sync": args[0]}) + "\n")
        log.write(json.dumps(args) + "\n")
    if args[:2] == ["versions", "upload"]:
        if os.environ.get("FAKE_WRANGLER_FAIL") == "upload":
            print("X [ERROR] A request to the Cloudflare API failed: Authentication error", file=sys.stderr)
            return 1
        preview = os.environ.get("FAKE_WRANGLER_PREVIEW") or None
        print(f"Worker Version ID: {VERSION_ID}")
        if preview:
            print(f"Version Preview URL: {preview}")
        if os.environ.get("WRANGLER_OUTPUT_FILE_PATH"):
            with open(os.environ["WRANGLER_OUTPUT_FILE_PATH"], "a") as out:
                record = {"type": "version-upload", "version_id": VERSION_ID, "preview_url": preview}
                out.write(json.dumps(record) + "\n")
        return 0
    if args[:2] == ["deployments", "status"]:
        if os.environ.get("FAKE_WRANGLER_FAIL") == "status":
            print("X [ERROR] The Worker memvault-production has no deployments.", file=sys.stderr)
            return 1
        print(json.dumps({"id": "dep-1", "versions": [{"version_id": CURRENT_ID, "percentage": 100}]}))
        return 0
    if args[:2] in (["versions", "deploy"], ["triggers", "deploy"]):
        return 0
    print(f"fake pywrangler: unexpected call {args}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())

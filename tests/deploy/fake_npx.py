"""Stands in for `npx --yes wrangler …` in the safe-deploy tests, behind the real pywrangler: it
plays Cloudflare's API for the commands the rail runs, over a JSON state file the tests' /health
server reads too (FAKE_CLOUDFLARE_STATE). It knows nothing of sync: pywrangler does that itself.

state: secrets (names), deployment ({version: percent}), next_version, fail ("upload", "status",
"deploy", "rollback"), calls (each argv, appended here)."""

import json
import os
import sys
from pathlib import Path


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def save(path: Path, state: dict) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state))
    os.replace(temporary, path)


def main() -> int:
    args = sys.argv[1:]
    if args[:2] != ["--yes", "wrangler"]:
        print(f"fake npx: only `npx --yes wrangler` is expected, got {args}", file=sys.stderr)
        return 3
    args = args[2:]
    path = Path(os.environ["FAKE_CLOUDFLARE_STATE"])
    state = load(path)
    state["calls"].append(args)
    save(path, state)
    fail = state.get("fail")
    if args[:2] == ["secret", "list"]:
        print(json.dumps([{"name": name, "type": "secret_text"} for name in state["secrets"]], indent=2))
        return 0
    if args[:2] == ["deployments", "status"]:
        if fail == "status":
            print("X [ERROR] The Worker has no deployments.", file=sys.stderr)
            return 1
        versions = [{"version_id": v, "percentage": p} for v, p in state["deployment"].items()]
        print(json.dumps({"id": "dep-1", "versions": versions}, indent=2))
        return 0
    if args[:2] == ["versions", "upload"]:
        if fail == "upload":
            print("X [ERROR] A request to the Cloudflare API failed: Authentication error [code: 10000]", file=sys.stderr)
            return 1
        version = state["next_version"]
        print(f"Uploaded memvault (1.00 sec)\nWorker Version ID: {version}")
        if os.environ.get("WRANGLER_OUTPUT_FILE_PATH"):
            with open(os.environ["WRANGLER_OUTPUT_FILE_PATH"], "a") as out:
                out.write(json.dumps({"type": "version-upload", "version_id": version, "preview_url": None}) + "\n")
        return 0
    if args[:2] == ["versions", "deploy"] or args[:1] == ["rollback"]:
        if fail == ("rollback" if args[0] == "rollback" else "deploy"):
            print("X [ERROR] A request to the Cloudflare API failed.", file=sys.stderr)
            return 1
        specs = [a for a in args[2:] if "@" in a and a.endswith("%")] if args[0] == "versions" else [f"{args[1]}@100%"]
        state = load(path)
        state["deployment"] = {spec.split("@")[0]: float(spec.split("@")[1].rstrip("%")) for spec in specs}
        save(path, state)
        return 0
    if args[:2] == ["triggers", "deploy"]:
        return 0
    print(f"fake npx: unexpected wrangler call {args}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())

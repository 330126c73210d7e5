#!/usr/bin/env python3
"""Keep a folder of markdown notes and the memvault brain in step.

  push  send the files whose content changed since the last push (per the manifest in the
        folder), one source per file (``files:<relative path>``), reconciled against that source
        alone; files deleted locally are retired. Needs the write credential.
  pull  rebuild the folder from the brain's export. A local file newer than the brain's copy is
        never overwritten unless --force is given.

The token comes from --token or MEMVAULT_BRAIN_TOKEN; the server from --url or MEMVAULT_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import httpx
from tqdm import tqdm

MANIFEST = ".brain-sync.json"
PREFIX = "files:"


@dataclass
class Report:
    sent: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    kept_newer: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_manifest(folder: Path) -> dict[str, str]:
    path = folder / MANIFEST
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.get("files", {}).items()}


def save_manifest(folder: Path, files: dict[str, str]) -> None:
    path = folder / MANIFEST
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps({"version": 1, "files": dict(sorted(files.items()))}, indent=1), encoding="utf-8")
    os.replace(temp, path)


def markdown_files(folder: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(folder.rglob("*.md")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue
        found[relative.as_posix()] = path
    return found


async def _write(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/v1/brain/facts", json=body)
    if response.status_code >= 400:
        raise SystemExit(f"brain refused the write ({response.status_code}): {response.text[:300]}")
    result: dict[str, Any] = response.json()
    return result


async def push(client: httpx.AsyncClient, folder: Path, scope: str, entry_type: str = "reference") -> Report:
    report = Report()
    manifest = load_manifest(folder)
    files = markdown_files(folder)
    changed = []
    for relative, path in files.items():
        digest = sha256(path.read_bytes())
        (report.unchanged if manifest.get(relative) == digest else changed).append(relative)
    for relative in tqdm(changed, desc="push", unit="file", disable=None):
        data = files[relative].read_bytes()
        text = data.decode("utf-8")
        source = PREFIX + relative
        if text.strip():
            fact = {"content": text, "entry_type": entry_type}
            result = await _write(client, {"source": source, "scope": scope, "reconcile": True, "facts": [fact]})
            if result.get("redacted"):
                report.redacted.append(relative)
        else:
            await _write(client, {"source": source, "scope": scope, "reconcile": True, "facts": []})
        manifest[relative] = sha256(data)
        save_manifest(folder, manifest)
        report.sent.append(relative)
    for relative in sorted(set(manifest) - set(files)):
        await _write(client, {"source": PREFIX + relative, "scope": scope, "reconcile": True, "facts": []})
        del manifest[relative]
        save_manifest(folder, manifest)
        report.retired.append(relative)
    return report


def safe_relative(source: str) -> str | None:
    """The file a ``files:`` source names, if it stays inside the folder."""
    relative = source[len(PREFIX):]
    parts = PurePosixPath(relative).parts
    if not relative or relative.startswith("/") or "\\" in relative or ".." in parts or not relative.endswith(".md"):
        return None
    return relative


async def export_rows(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    response = await client.get("/v1/brain/export", params={"source_prefix": PREFIX})
    if response.status_code >= 400:
        raise SystemExit(f"brain refused the export ({response.status_code}): {response.text[:300]}")
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


async def pull(client: httpx.AsyncClient, folder: Path, force: bool = False) -> Report:
    report = Report()
    folder.mkdir(parents=True, exist_ok=True)
    manifest = load_manifest(folder)
    rows = [row for row in await export_rows(client) if row.get("current")]
    for row in tqdm(rows, desc="pull", unit="file", disable=None):
        relative = safe_relative(str(row["source"]))
        if relative is None:
            report.refused.append(str(row["source"]))
            continue
        text = row.get("body") or row["content"]
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8")
        path = folder / relative
        if path.exists():
            local = path.read_bytes()
            # The brain stores notes stripped, so surrounding whitespace is not a difference.
            if local.strip() == data.strip():
                manifest[relative] = sha256(local)
                report.unchanged.append(relative)
                continue
            if path.stat().st_mtime > float(row["updated_at"]) and not force:
                report.kept_newer.append(relative)
                continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (float(row["updated_at"]), float(row["updated_at"])))
        manifest[relative] = sha256(data)
        report.written.append(relative)
    save_manifest(folder, manifest)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("direction", choices=["push", "pull"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--url", default=os.environ.get("MEMVAULT_URL", "http://127.0.0.1:8787"))
    parser.add_argument("--token", default=os.environ.get("MEMVAULT_BRAIN_TOKEN"))
    parser.add_argument("--scope", default="shared", help="scope of pushed notes (default: shared)")
    parser.add_argument("--entry-type", default="reference")
    parser.add_argument("--force", action="store_true", help="pull: overwrite local files even if newer")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("a brain token is required (--token or MEMVAULT_BRAIN_TOKEN)")

    async def run() -> Report:
        headers = {"Authorization": f"Bearer {args.token}"}
        async with httpx.AsyncClient(base_url=args.url, headers=headers, timeout=60) as client:
            if args.direction == "push":
                return await push(client, args.folder, args.scope, args.entry_type)
            return await pull(client, args.folder, args.force)

    report = asyncio.run(run())
    summary = {name: len(items) for name, items in vars(report).items() if items}
    print(json.dumps(summary or {"nothing": 0}))
    for name in ("kept_newer", "redacted", "refused"):
        for item in getattr(report, name):
            print(f"{name}: {item}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a push or pull did (or, in a dry run, would do) to each file, and why."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TextIO

# What changes something, and how a dry run says it instead.
WOULD = {"sent": "would send", "retired": "would retire", "written": "would write", "removed": "would remove"}
# What leaves a file out of sync until someone acts: the run's exit status is 1.
UNSETTLED = ("conflict", "refused")


@dataclass(frozen=True)
class Entry:
    kind: str
    path: str
    detail: str = ""


@dataclass
class Report:
    dry_run: bool = False
    entries: list[Entry] = field(default_factory=list)
    stopped: str | None = None

    def add(self, kind: str, path: str, detail: str = "") -> None:
        self.entries.append(Entry(kind, path, detail))

    def paths(self, kind: str) -> list[str]:
        return [entry.path for entry in self.entries if entry.kind == kind]

    def detail(self, kind: str, path: str) -> str:
        return next(e.detail for e in self.entries if e.kind == kind and e.path == path)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for entry in self.entries:
            counts[entry.kind] = counts.get(entry.kind, 0) + 1
        return counts

    def exit_status(self) -> int:
        if self.stopped:
            return 2
        return 1 if any(entry.kind in UNSETTLED for entry in self.entries) else 0

    def print(self, out: TextIO) -> None:
        if self.dry_run:
            print("dry run: nothing was sent, retired or written", file=out)
        for entry in self.entries:
            if entry.kind == "unchanged":
                continue
            label = WOULD.get(entry.kind, entry.kind) if self.dry_run else entry.kind
            print(f"{label}: {entry.path}" + (f" ({entry.detail})" if entry.detail else ""), file=out)
        if self.stopped:
            print(f"stopped: {self.stopped}", file=out)
        print(json.dumps(self.counts() or {"nothing": 0}, sort_keys=True), file=out)

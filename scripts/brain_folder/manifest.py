"""``.brain-sync.json`` in the folder: for every file, what the last sync saw on each side — the
SHA-256 of the file's bytes (``local``) and the brain's content hash of its text (``brain``) —
with the scope and type it was sent under. Written after every file that lands, through a
temporary file, so an interrupted run leaves a manifest that claims nothing the brain lacks."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

MANIFEST_FILE = ".brain-sync.json"
VERSION = 2


class ManifestError(ValueError):
    pass


@dataclass(frozen=True)
class Synced:
    local: str
    brain: str | None = None
    scope: str | None = None
    entry_type: str | None = None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Manifest:
    def __init__(self, folder: Path, files: dict[str, Synced], dry_run: bool = False) -> None:
        self.path = folder / MANIFEST_FILE
        self.files = files
        self.dry_run = dry_run

    @classmethod
    def load(cls, folder: Path, dry_run: bool = False) -> Manifest:
        path = folder / MANIFEST_FILE
        if not path.exists():
            return cls(folder, {}, dry_run)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            files = {}
            for relative, entry in data.get("files", {}).items():
                # Version 1 kept only the hash of the file as last pushed or pulled.
                files[str(relative)] = Synced(local=entry) if isinstance(entry, str) else Synced(**entry)
        except (ValueError, TypeError, AttributeError) as error:
            raise ManifestError(f"{path} is not a manifest brain_sync can read ({error}); move it aside to "
                                "start over: files that match the brain are then recognised") from error
        return cls(folder, files, dry_run)

    def get(self, relative: str) -> Synced | None:
        return self.files.get(relative)

    def record(self, relative: str, synced: Synced) -> None:
        self.files[relative] = synced
        self.save()

    def forget(self, relative: str) -> None:
        if self.files.pop(relative, None) is not None:
            self.save()

    def save(self) -> None:
        if self.dry_run:
            return
        plain = {relative: {k: v for k, v in asdict(entry).items() if v is not None}
                 for relative, entry in sorted(self.files.items())}
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text(json.dumps({"version": VERSION, "files": plain}, indent=1) + "\n", encoding="utf-8")
        os.replace(temp, self.path)

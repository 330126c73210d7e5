"""pull: bring the brain's notes and skills into the folder, deciding by content hashes against
the manifest, never by clocks. A file unchanged here since the last sync takes the brain's copy;
a file changed here is never overwritten without ``force`` (kept, or a conflict when the brain
changed too); a file deleted here stays deleted while the brain's copy is the one last synced;
a file unchanged here whose synced version the brain retired is removed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from brain_folder import front_matter, skill_files
from brain_folder.folder import Exclusion, is_skill_path, writable_path, write_atomically
from brain_folder.manifest import Manifest, Synced, sha256
from brain_folder.placement import PlacementError, Placer
from brain_folder.push import SKILL_TYPE
from brain_folder.remote import Brain, BrainNote, Unavailable
from brain_folder.report import Report


@dataclass
class Pull:
    folder: Path
    manifest: Manifest
    placer: Placer
    report: Report
    force: bool
    exclusion: Exclusion

    def target(self, relative: str) -> Path | None:
        path = writable_path(self.folder, relative)
        if path is None or not relative.endswith(".md") or (path.exists() and not path.is_file()):
            self.report.add("refused", relative, "it would land outside the folder, through a symbolic link "
                                                 "or on something that is not a file")
            return None
        if self.exclusion.excludes(relative):
            self.report.add("excluded", relative, "excluded here, so not written")
            return None
        return path

    def held_back(self, relative: str, local: bytes | None, brain_hash: str) -> bool:
        """Whether the folder's copy must stay as it is (reported), rather than take the brain's."""
        if self.force:
            return False
        synced = self.manifest.get(relative)
        if local is None:
            if synced is not None and synced.brain == brain_hash:
                then = "skills stay in the brain" if is_skill_path(relative) else "the next push retires it"
                self.report.add("kept", relative, f"deleted here; {then}, pull --force restores it")
                return True
            return False
        digest = sha256(local)
        if synced is not None and synced.local == digest:
            return False
        if synced is not None and synced.brain == brain_hash:
            self.report.add("kept", relative, "changed here since the last sync; push sends it")
        else:
            self.report.add("conflict", relative, f"changed here and in the brain (local {digest[:12]}, brain "
                                                  f"{brain_hash[:12]}): push --force keeps yours, pull --force "
                                                  "takes the brain's")
        return True

    def take(self, relative: str, path: Path, content: bytes, synced: Synced) -> None:
        if self.report.dry_run:
            self.report.add("written", relative)
            return
        write_atomically(path, content)
        self.manifest.record(relative, Synced(sha256(content), synced.brain, synced.scope, synced.entry_type))
        self.report.add("written", relative)

    def note(self, relative: str, note: BrainNote) -> None:
        path = self.target(relative)
        if path is None:
            return
        local = path.read_bytes() if path.exists() else None
        doc = front_matter.parse(local.decode("utf-8", "replace")) if local is not None else None
        synced = Synced("", note.content_hash, note.scope, note.entry_type)
        if local is not None and doc is not None and self._same_note(relative, doc, note):
            self.manifest.record(relative, Synced(sha256(local), note.content_hash, note.scope, note.entry_type))
            self.report.add("unchanged", relative)
            return
        if self.held_back(relative, local, note.content_hash):
            return
        self.take(relative, path, self._render(relative, note, doc.lines if doc else []), synced)

    def _same_note(self, relative: str, doc: front_matter.Document, note: BrainNote) -> bool:
        try:
            place = self.placer.place(relative, doc.fields)
        except PlacementError:
            return False
        return doc.body.strip() == note.text.strip() and (place.scope, place.entry_type) == (note.scope, note.entry_type)

    def _render(self, relative: str, note: BrainNote, keep: list[str]) -> bytes:
        """The note's text, under front matter naming its scope and type where the folder's rules
        would give another (or the file already names them), so a later push sends it back as is."""
        present = {line.partition(":")[0].strip().lower() for line in keep}
        scope, entry_type = self.placer.by_rules(relative)
        fields = {}
        if note.scope != scope or "scope" in present:
            fields["scope"] = note.scope
        type_keys = [key for key in ("type", "entry_type") if key in present]
        if note.entry_type != entry_type and not type_keys:
            type_keys = ["type"]
        fields.update({key: note.entry_type for key in type_keys})
        return front_matter.render(fields, note.text, keep).encode("utf-8")

    def retired(self, relative: str) -> None:
        """The brain retired the version of ``relative`` this folder last synced."""
        path = writable_path(self.folder, relative)
        synced = self.manifest.get(relative)
        if path is None or synced is None or self.exclusion.excludes(relative):
            return
        if not path.exists():
            self.manifest.forget(relative)
        elif sha256(path.read_bytes()) != synced.local and not self.force:
            self.report.add("conflict", relative, "retired in the brain, changed here: push sends it again")
        else:
            self.report.add("removed", relative, "retired in the brain")
            if not self.report.dry_run:
                path.unlink()
                self.manifest.forget(relative)


async def _skills(brain: Brain, run: Pull) -> None:
    for relative, summary in skill_files.skill_paths(await brain.skills()).items():
        path = run.target(relative)
        if path is None:
            continue
        local = path.read_bytes() if path.exists() else None
        synced = run.manifest.get(relative)
        brain_hash = str(summary["content_hash"])
        known = Synced("", brain_hash, str(summary["scope"]), SKILL_TYPE)
        if local is not None and synced is not None and (synced.local, synced.brain) == (sha256(local), brain_hash):
            run.report.add("unchanged", relative)
            continue
        full = await brain.skill(str(summary["slug"]), str(summary["scope"]))
        if local is not None:
            try:
                same = skill_files.same_skill(skill_files.registration(relative, local.decode("utf-8"), run.placer), full)
            except (UnicodeDecodeError, PlacementError):
                same = False
            if same:
                run.manifest.record(relative, Synced(sha256(local), brain_hash, str(summary["scope"]), SKILL_TYPE))
                run.report.add("unchanged", relative)
                continue
        if run.held_back(relative, local, brain_hash):
            continue
        run.take(relative, path, skill_files.render(full), known)


async def pull(brain: Brain, folder: Path, placer: Placer, force: bool = False, dry_run: bool = False) -> Report:
    report = Report(dry_run)
    if not dry_run:
        folder.mkdir(parents=True, exist_ok=True)
    manifest = Manifest.load(folder, dry_run)
    run = Pull(folder, manifest, placer, report, force, Exclusion(folder))
    try:
        current, retired = await brain.notes()
        for relative, note in sorted(current.items()):
            if not is_skill_path(relative):  # a skill's file is the skill's, written below
                run.note(relative, note)
        for relative, synced in sorted(manifest.files.items()):
            if relative not in current and (relative, synced.brain) in retired:
                run.retired(relative)
        await _skills(brain, run)
    except Unavailable as error:
        report.stopped = str(error)
    return report

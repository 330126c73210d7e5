"""push: send each note and skill file whose bytes, scope or type changed since the last sync,
and retire the notes deleted or excluded since. A file whose copy in the brain changed since the
last sync (another machine pushed, a writer edited) is a conflict, sent only with ``force``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brain_folder import front_matter
from brain_folder.folder import Listing, walk
from brain_folder.manifest import Manifest, Synced, sha256
from brain_folder.placement import Placement, PlacementError, Placer
from brain_folder.remote import Brain, BrainNote, Refused, Unavailable
from brain_folder.report import Report
from brain_folder.skill_files import registration, same_skill

SKILL_TYPE = "skill"


@dataclass
class Push:
    brain: Brain
    manifest: Manifest
    placer: Placer
    report: Report
    force: bool

    def conflict(self, relative: str, brain_hash: str, local_hash: str) -> None:
        self.report.add("conflict", relative, f"the brain's copy changed since the last sync (brain {brain_hash[:12]}, "
                                              f"local {local_hash[:12]}): pull to see it, or push --force to replace it")

    def moved_on(self, synced: Synced | None, brain_hash: str | None) -> bool:
        """Whether the brain holds something this folder never saw (a manifest of version 1 knew
        only the local side, so it cannot tell, and then the file is sent as before)."""
        if brain_hash is None or self.force:
            return False
        return synced is None or (synced.brain is not None and synced.brain != brain_hash)

    async def note(self, relative: str, path: Path, current: BrainNote | None) -> None:
        data = path.read_bytes()
        digest, placed = sha256(data), self._placed(relative, data)
        if placed is None:
            return
        doc, place = placed
        synced = self.manifest.get(relative)
        if synced is not None and (synced.local, synced.scope, synced.entry_type) == (digest, *_pair(place)):
            self.report.add("unchanged", relative)
            return
        text = doc.body.strip()
        if current is not None and current.text.strip() == text and (current.scope, current.entry_type) == _pair(place):
            self.manifest.record(relative, Synced(digest, current.content_hash, *_pair(place)))
            self.report.add("unchanged", relative)
            return
        if self.moved_on(synced, current.content_hash if current else None):
            assert current is not None
            self.conflict(relative, current.content_hash, digest)
            return
        if not text:
            await self.retire(relative, current, "the file is empty", Synced(digest, None, *_pair(place)))
            return
        detail = f"scope {place.scope}, type {place.entry_type}"
        if self.report.dry_run:
            self.report.add("sent", relative, detail)
            return
        try:
            brain_hash, redacted = await self.brain.write_note(relative, text, place.scope, place.entry_type)
        except Refused as refusal:
            self.report.add("refused", relative, str(refusal))
            return
        self.manifest.record(relative, Synced(digest, brain_hash, *_pair(place)))
        self.report.add("sent", relative, detail + ("; the brain holds it redacted, the file keeps it whole"
                                                    if redacted else ""))

    async def retire(self, relative: str, current: BrainNote | None, why: str, after: Synced | None = None) -> None:
        if self.report.dry_run:
            if current is not None:
                self.report.add("retired", relative, why)
            return
        if current is not None:
            try:
                await self.brain.retire_note(relative)
            except Refused as refusal:
                self.report.add("refused", relative, str(refusal))
                return
            self.report.add("retired", relative, why)
        if after is None:
            self.manifest.forget(relative)
        else:
            self.manifest.record(relative, after)

    async def gone(self, relative: str, listing: Listing, current: BrainNote | None) -> None:
        """A file the last sync knew that the folder no longer offers: deleted, or now excluded."""
        excluded = relative in listing.excluded or any(relative.startswith(d) for d in listing.excluded if d.endswith("/"))
        if excluded:
            # Excluding a file is a decision to keep it out of the brain: retired even if the brain changed it.
            await self.retire(relative, current, "now excluded")
            return
        synced = self.manifest.get(relative)
        if current is not None and self.moved_on(synced, current.content_hash):
            self.report.add("conflict", relative, "deleted here, but the brain's copy changed since the last sync: "
                                                  "pull to get it back, or push --force to retire it")
            return
        await self.retire(relative, current, "deleted here")

    async def skill(self, relative: str, path: Path, listed: dict[tuple[str, str], dict[str, Any]]) -> None:
        data = path.read_bytes()
        digest = sha256(data)
        try:
            fields = registration(relative, data.decode("utf-8"), self.placer)
        except (UnicodeDecodeError, PlacementError) as error:
            self.report.add("refused", relative, str(error))
            return
        synced = self.manifest.get(relative)
        if synced is not None and (synced.local, synced.scope) == (digest, fields["scope"]):
            self.report.add("unchanged", relative)
            return
        known = listed.get((fields["scope"], fields["slug"]))
        if known is not None and self.moved_on(synced, str(known["content_hash"])):
            full = await self.brain.skill(fields["slug"], fields["scope"])
            if not same_skill(fields, full):
                self.conflict(relative, str(known["content_hash"]), digest)
                return
        detail = f"skill {fields['slug']}, scope {fields['scope']}"
        if self.report.dry_run:
            self.report.add("sent", relative, detail)
            return
        try:
            answer = await self.brain.send_skill(fields)
        except Refused as refusal:
            self.report.add("refused", relative, str(refusal))
            return
        skill = answer["skill"]
        self.manifest.record(relative, Synced(digest, str(skill["content_hash"]), fields["scope"], SKILL_TYPE))
        self.report.add("sent" if answer["status"] != "unchanged" else "unchanged", relative,
                        f"{detail}, version {skill['version']}")

    def _placed(self, relative: str, data: bytes) -> tuple[front_matter.Document, Placement] | None:
        try:
            doc = front_matter.parse(data.decode("utf-8"))
            return doc, self.placer.place(relative, doc.fields)
        except (UnicodeDecodeError, PlacementError) as error:
            self.report.add("refused", relative, str(error))
            return None


def _pair(place: Placement) -> tuple[str, str]:
    return place.scope, place.entry_type


async def push(brain: Brain, folder: Path, placer: Placer, force: bool = False, dry_run: bool = False) -> Report:
    report = Report(dry_run)
    manifest = Manifest.load(folder, dry_run)
    listing = walk(folder)
    for relative, why in listing.excluded.items():
        report.add("excluded", relative, why)
    run = Push(brain, manifest, placer, report, force)
    try:
        current, _ = await brain.notes()
        for relative, path in listing.notes.items():
            await run.note(relative, path, current.get(relative))
        if listing.skills:
            listed = {(str(s["scope"]), str(s["slug"])): s for s in await brain.skills()}
            for relative, path in listing.skills.items():
                await run.skill(relative, path, listed)
                synced = manifest.get(relative)
                if relative in current and (dry_run or (synced is not None and synced.entry_type == SKILL_TYPE)):
                    # Pushed as a note before SKILL.md files were skills: the skill replaces that note.
                    await run.retire(relative, current[relative], "the note of this path, now a skill", synced)
        for relative in sorted(set(manifest.files) - set(listing.notes) - set(listing.skills)):
            if manifest.files[relative].entry_type == SKILL_TYPE:
                report.add("kept", relative, "a skill stays in the brain when its file goes: skills are not retired")
            else:
                await run.gone(relative, listing, current.get(relative))
    except Unavailable as error:
        report.stopped = str(error)
    return report

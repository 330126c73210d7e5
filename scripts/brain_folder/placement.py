"""Which scope and entry type a file goes to: its front matter (``scope:``, ``type:`` or
``entry_type:``), else the longest matching path prefix of ``.brain-sync.toml`` in the folder,
else the command line's folder default::

    [paths."family/"]
    scope = "family"

    [paths."work/clients/"]
    scope = "business"
    type = "project"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

CONFIG_FILE = ".brain-sync.toml"
KEYS = ("scope", "type", "entry_type")


class PlacementError(ValueError):
    """A file or the folder's config says something contradictory; nothing of it is sent."""


@dataclass(frozen=True)
class Placement:
    scope: str
    entry_type: str


@dataclass(frozen=True)
class Rule:
    prefix: str
    scope: str | None
    entry_type: str | None

    def covers(self, relative: str) -> bool:
        return relative == self.prefix or relative.startswith(self.prefix.rstrip("/") + "/")


def _one_type(fields: dict[str, object], where: str) -> str | None:
    kinds = {str(fields[k]) for k in ("type", "entry_type") if fields.get(k) not in (None, "")}
    if len(kinds) > 1:
        raise PlacementError(f"{where}: type and entry_type disagree ({', '.join(sorted(kinds))})")
    return kinds.pop() if kinds else None


class Placer:
    def __init__(self, folder: Path, scope: str, entry_type: str) -> None:
        self.default = Placement(scope, entry_type)
        self.rules: list[Rule] = []
        config = folder / CONFIG_FILE
        if not config.is_file() or config.is_symlink():
            return
        try:
            data = tomllib.loads(config.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise PlacementError(f"{CONFIG_FILE}: {error}") from error
        unknown = sorted(set(data) - {"paths"})
        if unknown or not isinstance(data.get("paths", {}), dict):
            raise PlacementError(f"{CONFIG_FILE}: only a [paths] table is understood (found {', '.join(unknown)})")
        for prefix, values in data.get("paths", {}).items():
            where = f"{CONFIG_FILE} [paths.{prefix!r}]"
            if not isinstance(values, dict) or set(values) - set(KEYS) or not values:
                raise PlacementError(f"{where}: give scope and/or type, nothing else")
            if prefix.startswith("/") or ".." in prefix.split("/") or not prefix.strip("/"):
                raise PlacementError(f"{where}: a prefix is a path inside the folder, like family/")
            given = values.get("scope")
            self.rules.append(Rule(prefix, None if given is None else str(given), _one_type(values, where)))
        self.rules.sort(key=lambda rule: len(rule.prefix.rstrip("/")), reverse=True)

    def place(self, relative: str, front: dict[str, str]) -> Placement:
        scope, entry_type = self.by_rules(relative)
        return Placement(front.get("scope") or scope, _one_type(dict(front), relative) or entry_type)

    def by_rules(self, relative: str) -> tuple[str, str]:
        """The scope and type a file at ``relative`` gets without front matter."""
        scope = next((r.scope for r in self.rules if r.scope and r.covers(relative)), self.default.scope)
        kind = next((r.entry_type for r in self.rules if r.entry_type and r.covers(relative)), self.default.entry_type)
        return scope, kind

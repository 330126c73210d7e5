"""A skill as ``skills/<slug>/SKILL.md``: front matter ``name`` (the slug, as SKILL.md files name
their directory), ``title`` (the skill's display name, when it is not the slug), ``description``
(what it does and the phrases that should trigger it), ``version`` (the brain's, as last pulled;
the brain numbers versions itself) and ``scope``; the body holds the steps. A slug that lives in
several scopes gets one directory per scope, ``skills/<slug>@<scope>/``."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from brain_folder import front_matter
from brain_folder.folder import SKILL_FILE, SKILLS_DIR
from brain_folder.placement import Placer

SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def skill_paths(listed: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Where each listed skill lives in the folder."""
    shared = Counter(str(skill["slug"]) for skill in listed)
    paths = {}
    for skill in listed:
        slug = str(skill["slug"])
        directory = slug if shared[slug] == 1 else f"{slug}@{skill['scope']}"
        paths[f"{SKILLS_DIR}/{directory}/{SKILL_FILE}"] = skill
    return paths


def registration(relative: str, text: str, placer: Placer) -> dict[str, str]:
    """What registering the file sends: the fields of ``POST /v1/brain/skills``."""
    doc = front_matter.parse(text)
    directory = relative.split("/")[1].split("@")[0]
    named = doc.fields.get("name", "")
    slug = named if SLUG.match(named) else directory
    title = doc.fields.get("title") or (named if named and named != slug else slug)
    return {"slug": slug, "scope": placer.place(relative, doc.fields).scope, "name": title,
            "description": doc.fields.get("description", "").strip(), "content": doc.body.strip()}


def same_skill(local: dict[str, str], skill: dict[str, Any]) -> bool:
    return all(str(local[key]).strip() == str(skill.get(key) or "").strip()
               for key in ("slug", "scope", "name", "description", "content"))


def render(skill: dict[str, Any]) -> bytes:
    fields = {"name": str(skill["slug"])}
    if skill["name"] != skill["slug"]:
        fields["title"] = str(skill["name"])
    fields.update(description=str(skill.get("description") or ""), version=str(skill["version"]),
                  scope=str(skill["scope"]))
    return front_matter.render(fields, str(skill["content"])).encode("utf-8")

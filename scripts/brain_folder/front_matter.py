"""YAML-ish front matter: a file that opens with a ``---`` line holds ``key: value`` lines up to
the next ``---`` line. Values are plain text or a double-quoted JSON string (what ``render``
writes for a value that plain text would garble); the body is what follows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

FENCE = "---"


@dataclass
class Document:
    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""
    # The front matter's lines as written, so a rewrite keeps what it does not change.
    lines: list[str] = field(default_factory=list)


def parse(text: str) -> Document:
    all_lines = text.splitlines()
    if not all_lines or all_lines[0].strip() != FENCE:
        return Document(body=text)
    for end in range(1, len(all_lines)):
        if all_lines[end].strip() in (FENCE, "..."):
            break
    else:
        return Document(body=text)
    lines = all_lines[1:end]
    fields = {}
    for line in lines:
        key, colon, value = line.partition(":")
        if colon and key.strip() and not line.startswith((" ", "\t", "#")):
            fields[key.strip().lower()] = _value(value.strip())
    return Document(fields, "\n".join(all_lines[end + 1:]).lstrip("\n"), lines)


def _value(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        try:
            return str(json.loads(raw))
        except json.JSONDecodeError:
            return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw


def _plain(value: str) -> str:
    simple = value == value.strip() and value and "\n" not in value and value[0] not in "\"'#&*!|>%@`[{"
    return value if simple and ": " not in value and " #" not in value else json.dumps(value, ensure_ascii=False)


def render(fields: dict[str, str], body: str, keep: list[str] | None = None) -> str:
    """``body`` under front matter holding ``fields``; the lines of ``keep`` (an earlier front
    matter) stay in place, those of a key in ``fields`` rewritten with its new value."""
    lines, done = [], set()
    for line in keep or []:
        key = line.partition(":")[0].strip().lower()
        if key in fields and not line.startswith((" ", "\t", "#")):
            lines.append(f"{line.partition(':')[0]}: {_plain(fields[key])}")
            done.add(key)
        else:
            lines.append(line)
    lines += [f"{key}: {_plain(value)}" for key, value in fields.items() if key not in done]
    text = body if body.endswith("\n") else body + "\n"
    if not lines:
        return text
    return "\n".join([FENCE, *lines, FENCE, "", text])

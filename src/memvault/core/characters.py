"""Text must be made of Unicode characters. JSON may spell half of a UTF-16 surrogate pair on its
own (``"\\ud800"``), a JavaScript string may hold one, and a JSON decoder hands it over as a
Python ``str``; no UTF-8 encoder, store or model takes it. Every command passes
``require_characters`` before anything is read from it, so such text is bad input (a 4xx naming
where it is), never a failure half-way through a write or a search. What the memory router relays
is the caller's and the provider's, so there such text is ``repaired`` instead, for memvault's own
reading and storing."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memvault.core.errors import InvalidField, InvalidInput

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# In a raw JSON body a lone surrogate is a \uD800-\uDFFF escape, or its three bytes encoded as if
# it were a character (a JSON decoder of bytes lets those through): without either, none is there.
_MAYBE_IN_JSON = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _broken(text: str) -> bool:
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def lone_surrogate_path(value: object) -> str | None:
    """Where in ``value`` (text, or lists and objects of it, keys included) a lone surrogate
    is, as a path such as ``[0].content``; ``""`` for ``value`` itself, None when there is none."""
    pending: list[tuple[str, object]] = [("", value)]
    while pending:
        path, item = pending.pop()
        if isinstance(item, str):
            if _broken(item):
                return path
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if isinstance(key, str) and _broken(key):
                    return path
                pending.append((f"{path}.{key}", inner))
        elif isinstance(item, list | tuple):
            pending.extend((f"{path}[{index}]", inner) for index, inner in enumerate(item))
    return None


def require_characters(value: object, where: str, error: type[InvalidInput] = InvalidField) -> None:
    """Refuse ``value`` with ``error`` naming ``where`` and the path inside it (the request body
    when both are empty) if any text in it holds a lone surrogate. The text itself is never
    echoed: it may hold a secret."""
    path = lone_surrogate_path(value)
    if path is not None:
        named = f"{where}{path}".lstrip(".") or "the request body"
        raise error(f"{named} holds a lone UTF-16 surrogate (such as \\ud800 without its pair), "
                    "which is not a character; send the text as UTF-8")


def repaired(text: str) -> str:
    """``text`` as characters, for text memvault did not choose to take (a provider's answer): the
    halves of a pair that arrived apart (in two stream events) joined, and any lone half made
    U+FFFD, so the answer is stored rather than lost."""
    if not _broken(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def repaired_json(raw: bytes, decoded: Any) -> Any:
    """A JSON body decoded from ``raw`` with every text in it ``repaired`` (keys included), in
    place. A relayed body is the caller's to send as it is; only what memvault reads, stores or
    re-encodes from it needs characters. It is walked only when its bytes could spell a lone
    surrogate, and without recursion: a body may nest as deep as the JSON decoder allows."""
    if _MAYBE_IN_JSON.search(raw) is None:
        return decoded
    if isinstance(decoded, str):
        return repaired(decoded)
    pending = [decoded]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if any(isinstance(key, str) and _broken(key) for key in node):
                items = list(node.items())
                node.clear()
                node.update((repaired(key) if isinstance(key, str) else key, inner) for key, inner in items)
            places: Any = node.items()
        elif isinstance(node, list):
            places = enumerate(node)
        else:
            continue
        for place, inner in list(places):
            if isinstance(inner, str):
                node[place] = repaired(inner)
            elif isinstance(inner, dict | list):
                pending.append(inner)
    return decoded

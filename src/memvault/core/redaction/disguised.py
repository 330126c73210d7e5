"""Secrets written in a disguise the text itself gives away: turned by ROT13 (the text holds a
credential's word so turned, ``cnffjbeq``), written backwards (``drowssap ym``), or spelled in
HTML's character references (``&#112;&#97;…``). The text is read undisguised, through the whole
gate, and what the gate finds there is cut where it stood in the disguise: the label's word in
the disguise is what lets the value's be read, as it is in plain text.

A disguise is only undone where it shows: a word of the list below, turned or reversed, or a run
of character references. Plain text never pays for it beyond a few substring tests."""

from __future__ import annotations

import codecs
import html
import re
import threading
from collections.abc import Callable, Iterator
from itertools import islice

from memvault.core.redaction.spans import Hit

# Credential words as they read turned by ROT13 or reversed. Short or common turnings ("cva" for
# "pin") are left out: a word of a sentence may read so by chance.
_WORDS = ("password", "passwort", "passcode", "passphrase", "secret", "token", "apikey", "api key", "api_key",
          "credentials", "pin code", "pincode", "my pin", "the pin")
_ROT13_WORDS = tuple(codecs.encode(word, "rot13") for word in _WORDS)
_REVERSED_WORDS = tuple(word[::-1] for word in _WORDS)
# A run of four or more of HTML's character references, decimal or hex (a word spelled in them).
_REFERENCE = r"&#(?:[0-9]{1,7}|[xX][0-9a-fA-F]{1,6});?"
_REFERENCES = re.compile(f"(?:{_REFERENCE}){{4,}}")
_ONE_REFERENCE = re.compile(_REFERENCE)
_MOST_REFERENCE_RUNS = 32
_inside = threading.local()


def disguised(text: str) -> Iterator[Hit]:
    """What the gate finds in ``text`` undisguised, placed in ``text``."""
    if getattr(_inside, "active", False):
        return  # the undisguised text is read by the gate without this rule, so a disguise is undone once
    lowered = text.lower()
    if any(word in lowered for word in _ROT13_WORDS):
        yield from _found(text, codecs.encode(text, "rot13"), lambda start, end: (start, end))
    if any(word in lowered for word in _REVERSED_WORDS):
        size = len(text)
        yield from _found(text, text[::-1], lambda start, end: (size - end, size - start))
    if "&#" in text:
        yield from _references(text)


def _found(text: str, undone: str, placed: Callable[[int, int], tuple[int, int]]) -> Iterator[Hit]:
    for hit in _gated(undone):
        start, end = placed(hit.start, hit.end)
        yield Hit(start, end, hit.kind)


def _references(text: str) -> Iterator[Hit]:
    """The text with each run of character references read as the characters they stand for; a
    hit inside a run takes the references it covers."""
    pieces: list[str] = []
    origins: list[tuple[int, int]] = []  # each character of the read text: where it came from
    done = 0
    for run in islice(_REFERENCES.finditer(text), _MOST_REFERENCE_RUNS):
        for index in range(done, run.start()):
            pieces.append(text[index])
            origins.append((index, index + 1))
        for reference in _ONE_REFERENCE.finditer(text, run.start(), run.end()):
            written = reference.group(0)
            for character in html.unescape(written if written.endswith(";") else written + ";"):
                pieces.append(character)
                origins.append((reference.start(), reference.end()))
        done = run.end()
    if not origins:
        return
    for index in range(done, len(text)):
        pieces.append(text[index])
        origins.append((index, index + 1))
    for hit in _gated("".join(pieces)):
        yield Hit(origins[hit.start][0], origins[hit.end - 1][1], hit.kind)


def _gated(text: str) -> list[Hit]:
    from memvault.core.redaction import hits_in

    _inside.active = True
    try:
        return hits_in(text)
    finally:
        _inside.active = False

"""Secrets written in a disguise the text itself gives away: turned by ROT13 (the text holds a
credential's word so turned, ``cnffjbeq``), written backwards (``drowssap ym``), spelled in
HTML's character references (``&#112;&#97;…``) or escaped as in a URL (``4409%207932…``, a request
line pasted from a log). The text is read undisguised, through the whole
gate, and what the gate finds there is cut where it stood in the disguise: the label's word in
the disguise is what lets the value's be read, as it is in plain text.

A disguise is only undone where it shows: a word of the list below, turned or reversed, or a run
of character references or of URL escapes. Plain text never pays for it beyond a few substring
tests."""

from __future__ import annotations

import codecs
import html
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from urllib.parse import unquote

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
# A run of URL escapes (``%20``, ``%C3%A9``), read as the characters its bytes spell in UTF-8. The
# escapes of a URL's own marks (``#%&/:=?``) stay as they are: read, they would turn a parameter's
# value (``redirect_uri=http%3A%2F%2F…``) into more of the URL, and its parts into other parameters.
_ESCAPES = re.compile(r"(?:%(?!2[356Ff]|3[AaDdFf])[0-9A-Fa-f]{2})+")
_MOST_REFERENCE_RUNS = 32
_inside = threading.local()


def disguised(text: str) -> Iterator[Hit]:
    """What the gate finds in ``text`` undisguised, placed in ``text``."""
    if getattr(_inside, "active", False):
        return  # the undisguised text is read by the gate without this rule, so a disguise is undone once
    lowered = text.lower()
    if any(word in lowered for word in _ROT13_WORDS):
        yield from _found(text, codecs.encode(text, "rot13"), lambda start, end: (start, end))
    # A reversed word beside the same word read forward is the text talking about the word
    # ("'drowssap' is 'password' backwards"), not a sentence written backwards.
    if any(turned in lowered and word not in lowered for word, turned in zip(_WORDS, _REVERSED_WORDS, strict=True)):
        size = len(text)
        yield from _found(text, text[::-1], lambda start, end: (size - end, size - start))
    if "&#" in text:
        yield from _read_as(text, _REFERENCES.finditer(text), _referenced)
    if "%" in text:
        yield from _read_as(text, _ESCAPES.finditer(text), _unescaped)


def _found(text: str, undone: str, placed: Callable[[int, int], tuple[int, int]]) -> Iterator[Hit]:
    for hit in _gated(undone):
        start, end = placed(hit.start, hit.end)
        yield Hit(start, end, hit.kind)


def _read_as(text: str, runs: Iterable[re.Match[str]], read: Callable[[re.Match[str]], Iterator[Piece]]) -> Iterator[Hit]:
    """The text with each of ``runs`` read as the characters ``read`` makes of it; a hit inside a
    run takes what it covers of the run."""
    pieces: list[str] = []
    origins: list[tuple[int, int]] = []  # each character of the read text: where it came from
    done = 0
    for run in islice(runs, _MOST_REFERENCE_RUNS):
        for index in range(done, run.start()):
            pieces.append(text[index])
            origins.append((index, index + 1))
        for character, start, end in read(run):
            pieces.append(character)
            origins.append((start, end))
        done = run.end()
    if not origins:
        return
    for index in range(done, len(text)):
        pieces.append(text[index])
        origins.append((index, index + 1))
    for hit in _gated("".join(pieces)):
        yield Hit(origins[hit.start][0], origins[hit.end - 1][1], hit.kind)


# A character read from a disguise, and where in the text the part that spelled it starts and ends.
Piece = tuple[str, int, int]


def _referenced(run: re.Match[str]) -> Iterator[Piece]:
    for reference in _ONE_REFERENCE.finditer(run.string, run.start(), run.end()):
        written = reference.group(0)
        for character in html.unescape(written if written.endswith(";") else written + ";"):
            yield character, reference.start(), reference.end()


def _unescaped(run: re.Match[str]) -> Iterator[Piece]:
    # Bytes that spell no UTF-8 text are no escape (``%DB_PASS%`` is a Windows variable): kept as written.
    try:
        read = unquote(run.group(0), errors="strict")
    except UnicodeDecodeError:
        for index in range(run.start(), run.end()):
            yield run.string[index], index, index + 1
        return
    for character in read:
        yield character, run.start(), run.end()


def _gated(text: str) -> list[Hit]:
    from memvault.core.redaction import hits_in

    _inside.active = True
    try:
        return hits_in(text)
    finally:
        _inside.active = False

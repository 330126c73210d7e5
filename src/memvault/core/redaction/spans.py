"""Where secrets are looked for and where they are cut out. Rules read a normalised copy of the
text: compatibility forms folded (NFKC: full-width digits and letters become ASCII), format
characters dropped (zero-width spaces and joiners, soft hyphens, direction marks), Cyrillic and
Greek letters drawn like Latin ones made Latin inside a Latin word, every Unicode space a plain
space, every Unicode dash a hyphen and every quotation mark a plain one, and lines a trailing
backslash continues joined. Each character of the copy remembers the character of the
original it came from, so what a rule finds is cut from the original text and everything around it
comes back exactly as it was sent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

# Non-ASCII runs to fold, and a line continuation (a backslash ending a line, as a shell and C
# read it) to drop: a secret split by one reads whole. And a Latin letter written as JSON's escape
# (``"pa\u0073sword"``), which a JSON reader turns back into the letter, and a slash JSON escaped
# (``https:\/\/hooks…``).
_TO_FOLD = re.compile(r"[^\x00-\x7f]+|\\\r?\n|\\u00(?:[46][1-9a-fA-F]|[57][0-9aA])|\\/")
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d")
_LINE_BREAKS = frozenset("\x85\u2028\u2029")
# An arrow between a name and its value reads as the ASCII one (``Password ⇒ …``).
_ARROWS = frozenset("\u2192\u21d2\u27f6\u27f9\u279c\u2794\u27a1")
# Cyrillic and Greek letters drawn like Latin ones. Inside a Latin word (``pаssword`` with a Cyrillic
# "а") they read as the Latin letter, so a label disguised so is still a label; a word of their own
# script keeps them.
_LOOKALIKES = str.maketrans("аеорсухіјѕкмнтвАВЕКМНОРСТХІЈЅοαεικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                            "aeopcyxijskmhtbABEKMHOPCTXIJSoaeiknptuxABEZHIKMNOPTYX")
# Typographic and East Asian quotation marks read as the plain ones, so a value quoted with them
# (“…”, „…“, «…», ‘…’, 「…」) ends where its quotes do.
_QUOTES = {**dict.fromkeys("\u201c\u201d\u201e\u201f\u00ab\u00bb\u300c\u300d\u300e\u300f\u301d\u301e", '"'),
           **dict.fromkeys("\u2018\u2019\u201a\u201b\u2039\u203a", "'")}


@dataclass(frozen=True)
class Hit:
    """A secret found in the normalised text: ``text[start:end]``, of ``kind``; ``replacement``
    stands in for it (None: the kind's breadcrumb)."""

    start: int
    end: int
    kind: str
    replacement: str | None = None


@dataclass(frozen=True)
class Normalised:
    text: str
    origins: tuple[int, ...] | None  # each character's index in the original; None: the same text

    def original(self, start: int, end: int) -> tuple[int, int]:
        if self.origins is None:
            return start, end
        return self.origins[start], self.origins[end - 1] + 1


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    if char in _DASHES:
        return "-"
    if char in _LINE_BREAKS:
        return "\n"
    if char in _ARROWS:
        return "->"
    if char in _QUOTES:
        return _QUOTES[char]
    category = unicodedata.category(char)
    if category == "Cf":
        return ""
    if category == "Zs":
        return " "
    return unicodedata.normalize("NFKC", char)


def normalise(text: str) -> Normalised:
    if text.isascii() and "\\\n" not in text and "\\\r\n" not in text and "\\u00" not in text and "\\/" not in text:
        return Normalised(text, None)
    pieces: list[str] = []
    origins: list[int] = []
    done = 0
    for run in _TO_FOLD.finditer(text):
        start, end = run.span()
        pieces.append(text[done:start])
        origins.extend(range(done, start))
        done = end
        if text[start] == "\\":
            if text[start + 1] == "/":
                pieces.append("/")
                origins.append(start + 1)
            elif text[start + 1] == "u":
                # The escaped letter reads as itself only inside a word: ``\u0041`` alone is code.
                letter = chr(int(text[start + 2:end], 16))
                beside = (start > 0 and text[start - 1].isalpha()) or (end < len(text) and text[end].isalpha())
                pieces.append(letter if beside else text[start:end])
                origins.extend([start] if beside else range(start, end))
            continue
        if _inside_latin_word(text, start, end):
            pieces.append(text[start:end].translate(_LOOKALIKES))
            origins.extend(range(start, end))
            continue
        for index in range(start, end):
            folded = _fold(text[index])
            pieces.append(folded)
            origins.extend([index] * len(folded))
    pieces.append(text[done:])
    origins.extend(range(done, len(text)))
    return Normalised("".join(pieces), tuple(origins))


def _inside_latin_word(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is all letters that look Latin, with an ASCII letter beside it."""
    beside = (start > 0 and text[start - 1].isascii() and text[start - 1].isalpha()) or (
        end < len(text) and text[end].isascii() and text[end].isalpha())
    return beside and text[start:end].translate(_LOOKALIKES).isascii()


def merged(hits: Iterable[Hit]) -> list[Hit]:
    """Overlapping hits as one (the earliest one's kind and replacement), in order."""
    out: list[Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if hit.end <= hit.start:
            continue
        if out and hit.start < out[-1].end:
            last = out[-1]
            if hit.end > last.end:
                out[-1] = Hit(last.start, hit.end, last.kind, None if last.replacement is None or hit.kind != last.kind
                              else last.replacement)
            continue
        out.append(hit)
    return out

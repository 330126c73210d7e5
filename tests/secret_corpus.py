"""The secret corpus in tests/data/secrets: secrets that must disappear and look-alikes that must
come back verbatim, each with its family. ``secrets.jsonl`` and ``harmless.jsonl`` are the cases
the gate was tuned on; ``heldout_*.jsonl`` were written before the gate and never tuned on;
``heldout2_*.jsonl`` were written later, before its rules were read, against the reworked gate
(what they exposed was fixed by rules for a family or a setting, never for one string), and
``heldout3_*.jsonl`` to ``heldout10_*.jsonl`` the same way, each a round after the one before.

A case gives its secret literally (``secret``), or as a ``shape`` that is generated here, so
that no credential-shaped literal sits in the repository: ``<b62:36>`` is 36 random base62
characters; also ``hex``, ``HEX``, ``b64``, ``b64url``, ``UPNUM``, ``digits``, ``bech32`` runs,
``b32``, ``b58``, ``<wif>`` and ``<xprv>`` (wallet keys with a valid base58check checksum) and
``<bip39:N>`` (N seed words). A text may hold runs too (``AKIA<UPNUM:16>`` beside the secret, a
hash in a look-alike), so that its other credential-shaped parts are not literals either. The
random source is seeded per case, so every run sees the same corpus."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import string
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memvault.core.redaction.bip39 import BIP39_WORDS

CORPUS = Path(__file__).resolve().parent / "data" / "secrets"
ALPHABETS = {
    "b62": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "UPNUM": string.ascii_uppercase + string.digits,
    "digits": string.digits,
    "bech32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "b32": string.ascii_uppercase + "234567",
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
}
BASE58 = ALPHABETS["b58"]
# The words in a fixed order, so a seeded run draws the same ones; sorted once, not per case.
BIP39_IN_ORDER = sorted(BIP39_WORDS)
_PART = re.compile(r"<(\w+)(?::(\d+))?>")
# In a text, only a run with a named alphabet and a size is a shape: `<password>` is XML.
_TEXT_PART = re.compile(r"<(" + "|".join(ALPHABETS) + r"):(\d+)>")


@dataclass(frozen=True)
class Case:
    family: str
    text: str
    secret: str | None  # None for a look-alike
    kind: str | None
    split: str  # "tuned" or "heldout"


def _base58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number, out = int.from_bytes(data, "big"), ""
    while number:
        number, rest = divmod(number, 58)
        out = BASE58[rest] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def materialise(shape: str, rng: random.Random, part_pattern: re.Pattern[str] = _PART) -> str:
    def part(match: re.Match[str]) -> str:
        name, size = match.group(1), int(match.group(2) or 0)
        if name == "wif":
            return _base58check(b"\x80" + rng.randbytes(32) + b"\x01")
        if name == "xprv":
            return _base58check(bytes.fromhex("0488ade4") + rng.randbytes(41) + b"\0" + rng.randbytes(32))
        if name == "bip39":
            return " ".join(rng.choice(BIP39_IN_ORDER) for _ in range(size))
        return "".join(rng.choice(ALPHABETS[name]) for _ in range(size))

    return part_pattern.sub(part, shape)


def _load(name: str, split: str) -> list[Case]:
    cases = []
    with (CORPUS / name).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if not line.strip():
                continue
            raw = json.loads(line)
            secret, text = raw.get("secret"), raw["text"]
            rng = random.Random(f"{name}:{number}")
            if "shape" in raw:
                secret = materialise(raw["shape"], rng)
            text = materialise(text, rng, _TEXT_PART)
            if "shape" in raw:
                text = text.replace("{secret}", secret)
            cases.append(Case(raw.get("family", "misc"), text, secret, raw.get("kind"), split))
    return cases


SPLITS = ("tuned", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10")
SECRETS = (_load("secrets.jsonl", "tuned") + _load("heldout_secrets.jsonl", "heldout")
           + _load("heldout2_secrets.jsonl", "heldout2") + _load("heldout3_secrets.jsonl", "heldout3")
           + _load("heldout4_secrets.jsonl", "heldout4") + _load("heldout5_secrets.jsonl", "heldout5")
           + _load("heldout6_secrets.jsonl", "heldout6") + _load("heldout7_secrets.jsonl", "heldout7")
           + _load("heldout8_secrets.jsonl", "heldout8") + _load("heldout9_secrets.jsonl", "heldout9")
           + _load("heldout10_secrets.jsonl", "heldout10"))
HARMLESS = (_load("harmless.jsonl", "tuned") + _load("heldout_harmless.jsonl", "heldout")
            + _load("heldout2_harmless.jsonl", "heldout2") + _load("heldout3_lookalikes.jsonl", "heldout3")
            + _load("heldout4_lookalikes.jsonl", "heldout4") + _load("heldout5_lookalikes.jsonl", "heldout5")
            + _load("heldout6_lookalikes.jsonl", "heldout6") + _load("heldout7_lookalikes.jsonl", "heldout7")
            + _load("heldout8_lookalikes.jsonl", "heldout8") + _load("heldout9_lookalikes.jsonl", "heldout9")
            + _load("heldout10_lookalikes.jsonl", "heldout10"))


def caught(case: Case, stored: str) -> bool:
    """The secret is gone from what was stored (its characters in order, whatever stands between)."""
    assert case.secret is not None
    return case.secret not in stored


def shares(cases: Iterable[Case], passed: Callable[[Case], bool]) -> dict[tuple[str, str], tuple[int, int]]:
    """(split, family) -> (passed, total)."""
    table: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        row = table[(case.split, case.family)]
        row[0] += passed(case)
        row[1] += 1
    return {key: (row[0], row[1]) for key, row in sorted(table.items())}


def report(title: str, table: dict[tuple[str, str], tuple[int, int]]) -> str:
    lines = [title]
    for split in SPLITS:
        rows = {family: counts for (s, family), counts in table.items() if s == split}
        done, total = sum(n for n, _ in rows.values()), sum(t for _, t in rows.values())
        if total:
            lines.append(f"  {split}: {done}/{total} = {100 * done / total:.1f}%")
            lines += [f"    {family:<20} {n}/{t}" for family, (n, t) in rows.items()]
    return "\n".join(lines)


def gated(cases: Iterable[Case]) -> list[Case]:
    """The secrets the gate catches in a text on its own: what every surface must catch as well.
    The gate's own misses are counted by the corpus test, not laid at a surface's door."""
    return [case for case in cases if _caught_alone(case)]


@functools.cache
def _caught_alone(case: Case) -> bool:
    # Several test modules gate the same corpus while pytest collects them: each case is redacted once.
    from memvault.core.redaction import redact

    return caught(case, redact(case.text).text)


def sample(cases: Iterable[Case], per_family: int = 2) -> list[Case]:
    """The first ``per_family`` cases of each (split, family): every family on every surface,
    at a cost a surface test can pay. The later held-out splits name their families finely (one
    vendor or one setting each), so one case of each stands for its family; the fifth names every
    line its own family, and so do the sixth to the tenth, so one case of each kind (the name's first part: ``env``,
    ``yaml``, ``conn``…) stands for its kind. Every rule is held to the whole corpus by the corpus test."""
    taken: dict[tuple[str, str], int] = defaultdict(int)
    out = []
    for case in cases:
        family = case.family.split("_")[0] if case.split in ("heldout5", "heldout6", "heldout7", "heldout8", "heldout9", "heldout10") else case.family
        if taken[(case.split, family)] < (1 if case.split.startswith("heldout") and case.split != "heldout" else per_family):
            taken[(case.split, family)] += 1
            out.append(case)
    return out


_SHORT_SECRET = 8
_ALNUM = frozenset(string.ascii_letters + string.digits)


def _standing_alone(form: str, text: str) -> bool:
    """``form`` occurs in ``text`` with no ASCII letter or digit on either side. A scan with
    ``str.find`` rather than a look-behind pattern, which reads a long text many times slower."""
    start = text.find(form)
    while start >= 0:
        end = start + len(form)
        if (start == 0 or text[start - 1] not in _ALNUM) and (end == len(text) or text[end] not in _ALNUM):
            return True
        start = text.find(form, start + 1)
    return False


# Where a long secret occurs, one of its first four characters starts a 4-character gram at a
# multiple of 4 in the text: an index of those grams finds it without reading the text once per
# secret (a data folder's text runs to megabytes, and a sample holds hundreds of secrets).
_GRAM = 4


class _Grams:
    """The aligned places of the grams ``wanted`` in ``text``: only those a secret looked for can
    start with (of a text's grams, most are found in no secret, and indexing them all cost seconds)."""

    def __init__(self, text: str, wanted: set[str]) -> None:
        self.text = text
        self.starts: dict[str, list[int]] = defaultdict(list)
        for start in [at for at in range(0, len(text) - _GRAM + 1, _GRAM) if text[at : at + _GRAM] in wanted]:
            self.starts[text[start : start + _GRAM]].append(start)

    @staticmethod
    def leading(form: str) -> set[str]:
        """The grams ``holds`` looks up for ``form``."""
        return {form[offset : offset + _GRAM] for offset in range(_GRAM)}

    def holds(self, form: str) -> bool:
        assert len(form) >= 2 * _GRAM - 1
        for offset in range(_GRAM):
            for start in self.starts.get(form[offset : offset + _GRAM], ()):
                if start >= offset and self.text.startswith(form, start - offset):
                    return True
        return False


def leaks(cases: Iterable[Case], text: str) -> list[str]:
    """The secrets of ``cases`` that ``text`` holds, as sent or percent-escaped (as a URL carries
    them), found in the text as it is and unescaped. A short secret (a PIN, a card's code) counts
    only standing alone: inside a longer run of letters and digits (a hash, an id) it is chance."""
    from urllib.parse import quote, quote_plus, unquote_plus

    looked_for: list[tuple[str, str, set[str]]] = []
    for case in cases:
        assert case.secret is not None
        looked_for.append((case.family, case.secret, {case.secret, quote(case.secret, safe=""), quote_plus(case.secret)}))
    wanted = {gram for _, secret, forms in looked_for if len(secret) >= _SHORT_SECRET
              for form in forms for gram in _Grams.leading(form)}
    plain = unquote_plus(text)
    as_sent = _Grams(text, wanted)
    unescaped = as_sent if plain == text else _Grams(plain, wanted)
    found = []
    for family, secret, forms in looked_for:
        if len(secret) < _SHORT_SECRET:
            leaked = any(_standing_alone(form, text) or _standing_alone(form, plain) for form in forms)
        else:
            leaked = any(as_sent.holds(form) for form in forms) or unescaped.holds(secret)
        if leaked:
            found.append(f"{family}: {secret}")
    return found

"""The secret gate every stored text passes: card numbers, SSN shapes, API keys and private key
blocks are replaced by a breadcrumb naming the kind of secret, never its value. Numbers that
merely look similar (invoice numbers, tickers, the last four digits of a card) are kept."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

CARD_NUMBER = "card_number"
SSN = "ssn"
API_KEY = "api_key"
PRIVATE_KEY = "private_key"


@dataclass(frozen=True)
class Redaction:
    text: str
    kinds: tuple[str, ...]

    @property
    def redacted(self) -> bool:
        return bool(self.kinds)


def breadcrumb(kind: str) -> str:
    return f"[redacted:{kind}]"


_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)

# Vendor prefixes with a minimum tail, so words such as "sk-learn" or "pk-12" survive.
_API_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-[A-Za-z0-9_\-]{16,}"
    r"|pk-[A-Za-z0-9_\-]{16,}"
    r"|[sprk]k_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r")"
)

_SSN_DASHED = re.compile(r"(?<![\d-])(\d{3})[- ](\d{2})[- ](\d{4})(?![\d-])")
_SSN_LABELLED = re.compile(r"(?i)\b(?:ssn|social security(?: number| no\.?)?)\W{0,5}(\d{9})(?!\d)")

# 13-19 digits, optionally grouped by single spaces or dashes.
_CARD = re.compile(r"(?<![\d\w])\d(?:[ -]?\d){12,18}(?![\d\w])")


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _ssn_shape(area: str, group: str, serial: str) -> bool:
    # The SSA never issues these, so such numbers are dates, part numbers and the like.
    return area not in {"000", "666"} and not area.startswith("9") and group != "00" and serial != "0000"


def _card(match: re.Match[str]) -> str | None:
    digits = re.sub(r"\D", "", match.group(0))
    # Payment card numbers start with 2-6; a 13-digit millisecond timestamp starts with 1.
    if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits):
        return f"[redacted:{CARD_NUMBER} ending {digits[-4:]}]"
    return None


def _ssn_dashed(match: re.Match[str]) -> str | None:
    return breadcrumb(SSN) if _ssn_shape(*match.groups()) else None


def _ssn_labelled(match: re.Match[str]) -> str | None:
    number = match.group(1)
    if not _ssn_shape(number[:3], number[3:5], number[5:]):
        return None
    start = match.start(1) - match.start(0)
    return match.group(0)[:start] + breadcrumb(SSN)


_RULES: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (PRIVATE_KEY, _PRIVATE_KEY, lambda m: breadcrumb(PRIVATE_KEY)),
    (API_KEY, _API_KEY, lambda m: breadcrumb(API_KEY)),
    (SSN, _SSN_LABELLED, _ssn_labelled),
    (SSN, _SSN_DASHED, _ssn_dashed),
    (CARD_NUMBER, _CARD, _card),
)


def redact(text: str) -> Redaction:
    kinds: list[str] = []
    for kind, pattern, replace in _RULES:

        def substitute(match: re.Match[str], kind: str = kind, replace: Callable[..., str | None] = replace) -> str:
            replacement = replace(match)
            if replacement is None:
                return match.group(0)
            if kind not in kinds:
                kinds.append(kind)
            return replacement

        text = pattern.sub(substitute, text)
    return Redaction(text=text, kinds=tuple(kinds))

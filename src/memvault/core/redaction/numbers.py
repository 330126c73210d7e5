"""Payment cards, their codes' kind, and US social security numbers. A card is 13 to 19 digits that pass Luhn and
start as some card network's numbers do (Visa 4, Mastercard 51-55 and 2221-2720, Amex 34 and 37,
Discover, JCB, Diners, UnionPay, Maestro), in one run or grouped by spaces, dots, hyphens or line
breaks (Unicode spaces and dashes are already plain ones here). Numbers that merely look similar
(invoice, order, tracking and phone numbers, IBANs, the last four digits of a card) are kept: a
card network's prefix and Luhn together leave few of them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate

from memvault.core.redaction.spans import Hit

CARD_NUMBER = "card_number"
SSN = "ssn"
CARD_CODE = "card_code"

_DIGITS = re.compile(r"\d+")
_DOUBLED = str.maketrans("0123456789", "0246813579")  # a doubled digit, less 9 when over 9
_GROUPS = re.compile(
    r"(?<![A-Za-z0-9_])(?<!\d[ .\n/_\t-])(?<!\d[ .\n-]{2})(?<!\d[ .\n-]{3})"
    r"\d+(?:(?: {1,2}| ?[./_-] ?|\||\t|[ \t]*\r?\n[ \t]*)\d+)*"
)
# Two runs of eight, as a card is copied over two lines or boxes, only after the card's name: ids
# of eight digits are listed one a line often enough that a pair of them may pass Luhn.
_CARD_NAMED = re.compile(r"(?i:card|karte|carte|tarjeta|cart[ãa]o|carta|visa|mastercard|amex|cc)[^\n\d]{0,20}\Z")

# A card run together with the word before it, as a form or a chat may paste it (``visa4111…``):
# one run of digits that ends the word.
_GLUED = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]{1,12}(?P<digits>\d{13,19})(?![A-Za-z0-9_])")


_CID_AFTER = re.compile(r"[^\n]{0,40}?(?<![A-Za-z])(?i:CID)[ \t]*[:#]?[ \t]*(?P<code>\d{4})(?!\d)")


# Digits said in words, in the languages a PIN and a card are told in ("four one three five …").
DIGIT_WORDS = {
    **dict.fromkeys(("zero", "oh", "null", "zéro", "cero"), "0"), **dict.fromkeys(("one", "eins", "uno"), "1"),
    **dict.fromkeys(("two", "zwei", "dos", "deux"), "2"), **dict.fromkeys(("three", "drei", "tres", "trois"), "3"),
    **dict.fromkeys(("four", "vier", "cuatro", "quatre"), "4"),
    **dict.fromkeys(("five", "fünf", "funf", "fuenf", "cinco", "cinq"), "5"),
    **dict.fromkeys(("six", "sechs", "seis"), "6"), **dict.fromkeys(("seven", "sieben", "siete", "sept"), "7"),
    **dict.fromkeys(("eight", "acht", "ocho", "huit"), "8"), **dict.fromkeys(("nine", "neun", "nueve", "neuf"), "9"),
}
DIGIT_WORD = "(?:" + "|".join(sorted(DIGIT_WORDS, key=len, reverse=True)) + ")"
_CARD_IN_WORDS = re.compile(
    r"(?<![\w-])(?i:" + DIGIT_WORD + r"(?:[ \t]*[ ,-][ \t]*" + DIGIT_WORD + r"){12,18})(?![\w-])")
_WORD = re.compile(r"[^\W\d_]+")
# A card written backwards, as the text says ("card number backwards: …"), in one run or grouped.
_CARD_REVERSED = re.compile(
    r"(?i:backwards|reversed|in[ \t]+reverse)[^\d\n]{0,20}?(?<!\d)(?P<digits>\d(?:[ -]?\d){12,18})(?![\d-])")


def luhn_valid(digits: str) -> bool:
    return sum(map(int, digits[-1::-2] + digits[-2::-2].translate(_DOUBLED))) % 10 == 0


def card_network(digits: str) -> bool:
    """Whether some card network issues numbers that start so and are this long."""
    size, two, three, four = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return size in (13, 16, 19)
    if 51 <= two <= 55 or 2221 <= four <= 2720 or 2200 <= four <= 2204:
        return size == 16
    if two in (34, 37):
        return size == 15
    if two in (36, 38, 39) or 300 <= three <= 305:
        return 14 <= size <= 19
    return 16 <= size <= 19 and (
        four == 6011 or 644 <= three <= 649 or two in (65, 62, 81, 50, 56, 57, 58, 63, 67) or 3528 <= four <= 3589)


def _card_ends(lengths: list[int], named: bool) -> list[int]:
    """Where a card starting at the first of these groups can end (indexes into ``lengths``):
    one run of 13-19 digits, Amex 4-6-5, Diners 4-6-4, groups of four and a shorter rest, a digit
    at a time (as it is read out), or two runs of eight after the card's name (``named``)."""
    if 13 <= lengths[0] <= 19:
        return [0]
    if lengths[0] == 1:
        ones = next((index for index, length in enumerate(lengths) if length != 1), len(lengths))
        return [ones - 1] if 13 <= ones <= 19 else []
    if named and lengths[:2] == [8, 8]:
        return [1]
    if lengths[:2] == [4, 6]:
        return [2] if lengths[2:3] in ([5], [4]) else []
    # Groups of four: 4-4-4-(1 to 4) holds 13-16 digits, 4-4-4-4-(1 to 3) holds 17-19.
    if lengths[:3] != [4, 4, 4] or len(lengths) < 4 or lengths[3] > 4:
        return []
    return [3, 4] if lengths[3] == 4 and len(lengths) > 4 and lengths[4] <= 3 else [3]


def _card_windows(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """Every window of digit groups that is a card, as (first group, last group, last four),
    earliest and then shortest first."""
    lengths = [b - a for a, b in spans]
    digits = "".join(text[a:b] for a, b in spans)
    # Luhn sums of every window from prefix sums, one series per parity of the window's last digit,
    # so a long run of groups costs one pass rather than one pass per window.
    plain, doubled = list(map(int, digits)), list(map(int, digits.translate(_DOUBLED)))
    even_last, odd_last = plain[:], doubled[:]
    even_last[1::2], odd_last[1::2] = doubled[1::2], plain[1::2]
    sums = (list(accumulate(even_last, initial=0)), list(accumulate(odd_last, initial=0)))
    offsets = list(accumulate(lengths, initial=0))
    hits = []
    for first, (start, _) in enumerate(spans):
        # A digit at a time is a card only as a whole run: within a longer one it is counting.
        if text[start] not in "23456" or 1 < lengths[first] < 4 or (lengths[first] == 1 and first > 0):
            continue
        named = lengths[first] == 8 and _CARD_NAMED.search(text, max(0, start - 40), start) is not None
        for end in _card_ends(lengths[first: first + 19], named):
            low, high = offsets[first], offsets[first + end + 1]
            series = sums[(high - 1) % 2]
            if (series[high] - series[low]) % 10 == 0 and card_network(digits[low:high]):
                hits.append((first, first + end, digits[high - 4: high]))
    return hits


def cards(text: str) -> Iterator[Hit]:
    """A run of digit groups may hold a card among other numbers (a CVV, an expiry, a reference):
    each window that is a card is a hit, its breadcrumb keeping the last four digits. An Amex
    card's code goes by ``CID`` a few words after it (a customer's id elsewhere)."""
    for run in _GROUPS.finditer(text):
        if run.end() - run.start() < 13:
            continue
        spans = [(m.start() + run.start(), m.end() + run.start()) for m in _DIGITS.finditer(run.group(0))]
        for first, last, ending in _card_windows(text, spans):
            yield Hit(spans[first][0], spans[last][1], CARD_NUMBER, f"[redacted:{CARD_NUMBER} ending {ending}]")
            if (cid := _CID_AFTER.match(text, spans[last][1])) is not None:
                yield Hit(cid.start("code"), cid.end("code"), CARD_CODE)
    for said in _CARD_IN_WORDS.finditer(text):
        digits = "".join(DIGIT_WORDS[word.lower()] for word in _WORD.findall(said.group(0)))
        if luhn_valid(digits) and card_network(digits):
            yield Hit(said.start(), said.end(), CARD_NUMBER, f"[redacted:{CARD_NUMBER} ending {digits[-4:]}]")
    for turned in _CARD_REVERSED.finditer(text) if "rever" in text or "backw" in text else ():
        digits = turned.group("digits").replace(" ", "").replace("-", "")[::-1]
        if luhn_valid(digits) and card_network(digits):
            yield Hit(turned.start("digits"), turned.end("digits"), CARD_NUMBER)
    for glued in _GLUED.finditer(text):
        digits = glued.group("digits")
        if luhn_valid(digits) and card_network(digits):
            yield Hit(glued.start("digits"), glued.end("digits"), CARD_NUMBER, f"[redacted:{CARD_NUMBER} ending {digits[-4:]}]")


def _ssn_shape(match: re.Match[str]) -> bool:
    # The SSA never issues these, so such numbers are dates, part numbers and the like.
    area, group, serial = match.group("area"), match.group("group"), match.group("serial")
    return area not in {"000", "666"} and not area.startswith("9") and group != "00" and serial != "0000"


_SSN_PARTS = r"(?P<area>\d{3})(?P<sep>[-. /_]?)(?P<group>\d{2})(?P=sep)(?P<serial>\d{4})"
# Each digit apart, as a form or a voice transcript writes them ("5 9 8 2 3 2 1 7 6").
_SSN_SPACED = (r"(?P<area>\d [ ]?\d [ ]?\d)[ ]{1,2}(?P<sep>)(?P<group>\d [ ]?\d)[ ]{1,2}(?P<serial>\d [ ]?\d [ ]?\d [ ]?\d)")
_SSNS = (
    re.compile(  # after a label, in any of its spellings: SSN, SS#, Soc Sec No, social security number
        r"(?<![A-Za-z])(?i:ssn|ss#|soc(?:ial|\.)?[ \t]*sec(?:urity|\.)?(?:[ \t]*(?:number|num\.?|no\.?|#))?)"
        r"[^\d\n]{0,30}?(?<!\d)(?P<secret>(?:" + _SSN_PARTS + r"))(?!\d)"),
    re.compile(r"(?<![A-Za-z])(?i:ssn|ss#|soc(?:ial|\.)?[ \t]*sec(?:urity|\.)?(?:[ \t]*(?:number|num\.?|no\.?|#))?)"
               r"[^\d\n]{0,30}?(?<!\d)(?P<secret>" + _SSN_SPACED + r")(?![ ]?\d)"),
    re.compile(r"(?<![\w.-])(?P<secret>(?P<area>\d{3})(?P<sep>[-.])(?P<group>\d{2})(?P=sep)(?P<serial>\d{4}))"
               r"(?![\w-]|\.\d)"),
    re.compile(r"(?<![\w.-])(?<!\d )(?P<secret>(?P<area>\d{3})(?P<sep> )(?P<group>\d{2}) (?P<serial>\d{4}))"
               r"(?![\w.-]| \d)"),
)


def ssns(text: str) -> Iterator[Hit]:
    for pattern in _SSNS:
        for match in pattern.finditer(text):
            if _ssn_shape(match):
                yield Hit(match.start("secret"), match.end("secret"), SSN)

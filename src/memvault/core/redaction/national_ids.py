"""National identity numbers of other countries that open tax, benefit and credit records as a US
social security number does (``numbers.py``): Canada's SIN, Australia's TFN, the UK's National
Insurance number, India's Aadhaar, Brazil's CPF, Spain's DNI and NIE, Italy's codice fiscale, the
Netherlands' BSN, Sweden's personnummer, Germany's Steuer-ID, France's NIR and the US ITIN.

Each is found only under its own name, within a few words before it, and only when its check
digits (or check letter) hold where the number has them: a number of the same length under no such
name, or one whose check fails (an order number), is kept. Short names that are also words (SIN, NAS, CPF, DNI, BSN) count only in capitals."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from memvault.core.redaction.numbers import luhn_valid
from memvault.core.redaction.spans import Hit

NATIONAL_ID = "national_id"

# Between a name and its number: a few words ("is", "number:", "de"), no digit and no line break.
_GAP = r"[^\d\n]{0,30}?"
_NOT_BEFORE, _NOT_AFTER = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9]|[-./]\d)"


def _digits(value: str) -> list[int]:
    return [int(c) for c in value if c.isdigit()]


def _luhn(value: str) -> bool:
    return luhn_valid("".join(c for c in value if c.isdigit()))


def _tfn(value: str) -> bool:
    digits = _digits(value)
    weights = (1, 4, 3, 7, 5, 8, 6, 9, 10) if len(digits) == 9 else (10, 7, 8, 4, 6, 3, 5, 1)
    return sum(d * w for d, w in zip(digits, weights, strict=True)) % 11 == 0


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def _aadhaar(value: str) -> bool:
    check = 0
    for place, digit in enumerate(reversed(_digits(value))):
        check = _VERHOEFF_D[check][_VERHOEFF_P[place % 8][digit]]
    return check == 0 and _digits(value)[0] > 1


def _cpf(value: str) -> bool:
    digits = _digits(value)
    if len(set(digits)) == 1:
        return False
    first = sum(d * w for d, w in zip(digits[:9], range(10, 1, -1), strict=True)) * 10 % 11 % 10
    second = sum(d * w for d, w in zip(digits[:10], range(11, 1, -1), strict=True)) * 10 % 11 % 10
    return digits[9:] == [first, second]


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _dni(value: str) -> bool:
    plain = value.replace("-", "").replace(" ", "").upper()
    number = "XYZ".index(plain[0]) * 10_000_000 + int(plain[1:-1]) if plain[0] in "XYZ" else int(plain[:-1])
    return _DNI_LETTERS[number % 23] == plain[-1]


_FISCAL_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                       [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11,
                        3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def _fiscal(value: str) -> bool:
    code = value.upper()
    total = sum(_FISCAL_ODD[c] if place % 2 == 0 else (int(c) if c.isdigit() else ord(c) - 65)
                for place, c in enumerate(code[:15]))
    return chr(65 + total % 26) == code[15]


def _bsn(value: str) -> bool:
    digits = _digits(value)
    return any(digits) and (sum(d * w for d, w in zip(digits[:8], range(9, 1, -1), strict=True)) - digits[8]) % 11 == 0


def _personnummer(value: str) -> bool:
    digits = _digits(value)[-10:]
    month, day = digits[2] * 10 + digits[3], digits[4] * 10 + digits[5]
    return 1 <= month <= 12 and (1 <= day <= 31 or 61 <= day <= 91) and luhn_valid("".join(map(str, digits)))


def _steuer_id(value: str) -> bool:
    digits = _digits(value)
    if digits[0] == 0:
        return False
    product = 10
    for digit in digits[:10]:
        total = (digit + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == digits[10]


def _nir(value: str) -> bool:
    digits = "".join(map(str, _digits(value)))
    return digits[0] in "12378" and 97 - int(digits[:13]) % 97 == int(digits[13:])


def _always(_: str) -> bool:
    return True


def _names(label: str, cased: str) -> str:
    """``label`` in any case, ``cased`` (short names that are also words) only as written."""
    return f"(?i:{label})" + (f"|{cased}" if cased else "")


def _labelled(label: str, number: str, *, cased: str = "") -> re.Pattern[str]:
    return re.compile(rf"{_NOT_BEFORE}(?:{_names(label, cased)})(?![A-Za-z]){_GAP}{_NOT_BEFORE}(?P<secret>{number}){_NOT_AFTER}")


_SEP = r"[ .-]?"
_NUMBERS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (_labelled(r"social[ \t]+insurance(?:[ \t]+(?:number|no\.?|#))?|num[ée]ro[ \t]+d'assurance[ \t]+sociale",
               rf"\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{3}}", cased=r"SIN|S\.I\.N\.|NAS"), _luhn),
    (_labelled(r"tfn|tax[ \t]+file[ \t]+(?:number|no\.?|#)", rf"\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{2,3}}"), _tfn),
    (_labelled(r"national[ \t]+insurance(?:[ \t]+(?:number|no\.?|#))?|nino|n\.?i\.?[ \t]+(?:number|no\.?|#)",
               r"[A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d]"), _always),
    (_labelled(r"aadh?aa?r|adhaar", r"[2-9]\d{3} ?\d{4} ?\d{4}"), _aadhaar),
    (_labelled(r"cadastro[ \t]+de[ \t]+pessoas?[ \t]+f[íi]sicas?", r"\d{3}\.?\d{3}\.?\d{3}-?\d{2}",
               cased=r"CPF|C\.P\.F\."), _cpf),
    (_labelled(r"documento[ \t]+nacional[ \t]+de[ \t]+identidad", r"(?:\d{8}|[XYZ]-?\d{7})-? ?[A-Za-z]",
               cased=r"DNI|NIE|NIF"), _dni),
    (_labelled(r"codice[ \t]+fiscale", r"[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z]",
               cased=r"C\.F\.|CF"), _fiscal),
    (_labelled(r"burgerservicenummer|sofinummer", rf"\d{{4}}{_SEP}\d{{2}}{_SEP}\d{{3}}|\d{{3}}{_SEP}\d{{3}}{_SEP}\d{{3}}",
               cased="BSN"), _bsn),
    (_labelled(r"personnummer|personnr|person-?nummer", r"(?:19|20)?\d{6}[-+ ]?\d{4}"), _personnummer),
    (_labelled(r"steuer-?[ \t]?id(?:entifikationsnummer)?|steuer-?idnr|idnr",
               r"[1-9]\d ?\d{3} ?\d{3} ?\d{3}"), _steuer_id),
    (_labelled(r"num[ée]ro[ \t]+de[ \t]+s[ée]cu(?:rit[ée][ \t]+sociale)?|n°[ \t]*(?:de[ \t]+)?s[ée]cu(?:rit[ée][ \t]+sociale)?"
               r"|s[ée]curit[ée][ \t]+sociale", r"[12378] ?\d{2} ?\d{2} ?\d{2} ?\d{3} ?\d{3} ?\d{2}", cased="NIR"), _nir),
    (_labelled("itin", r"9\d{2}-?(?:5\d|6[0-5]|7\d|8[0-8]|9[0-24-9])-?\d{4}"), _always),
)


# Six digits in a row, or apart by one space, dot or dash each, or a codice fiscale's start: every
# number above holds one, and most texts none, so they are read once.
_TWO_DIGITS = re.compile(r"\d\d")
_NUMBER_LIKE = re.compile(r"\d(?:[ .-]?\d){5}|[A-Za-z]{6}\d\d[A-Za-z]")


def national_ids(text: str) -> Iterator[Hit]:
    if _TWO_DIGITS.search(text) is None or _NUMBER_LIKE.search(text) is None:
        return
    for pattern, valid in _NUMBERS:
        for match in pattern.finditer(text):
            if valid(match.group("secret")):
                yield Hit(match.start("secret"), match.end("secret"), NATIONAL_ID)

"""The secret gate every stored text passes: card numbers, SSNs, API keys, tokens, passwords and
private key blocks are replaced by a breadcrumb naming the kind of secret, never its value. Numbers
that merely look similar (invoice and tracking numbers, phone numbers, tickers, the last four digits
of a card) are kept. IBANs are kept too: they are printed on every invoice and move no money
without a login, and a rule for them would also take order and reference numbers.

One rule table: each rule has a name, a pattern and a validator that returns the replacement of the
whole match, or None when the match is not a secret. Secrets that only context reveals (an AWS
secret key, nine bare digits, a password) keep their label and lose their value. Every pattern is
linear: variable-length runs are anchored by a lookbehind of their own class, so a match is tried
once per run, never once per character of it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from memvault.core.errors import InvalidInput

CARD_NUMBER = "card_number"
SSN = "ssn"
API_KEY = "api_key"
PRIVATE_KEY = "private_key"
PASSWORD = "password"
TOKEN = "token"


@dataclass(frozen=True)
class Redaction:
    text: str
    kinds: tuple[str, ...]

    @property
    def redacted(self) -> bool:
        return bool(self.kinds)


def breadcrumb(kind: str) -> str:
    return f"[redacted:{kind}]"


Validator = Callable[[re.Match[str]], str | None]


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    pattern: re.Pattern[str]
    validate: Validator


def _swap(match: re.Match[str], group: str, replacement: str, keep_tail: int = 0) -> str:
    """The match with one group replaced (labels and quotes around it stay)."""
    offset = match.start()
    start, end = match.start(group) - offset, match.end(group) - offset - keep_tail
    whole = match.group(0)
    return whole[:start] + replacement + whole[end:]


def _mixed(run: str) -> bool:
    """Reads as random rather than as a word: two of lower, upper, digit, each at least twice."""
    counts = (sum(c.islower() for c in run), sum(c.isupper() for c in run), sum(c.isdigit() for c in run))
    return sum(n >= 2 for n in counts) >= 2


_RUN = re.compile(r"[A-Za-z0-9]{16,}")


def _random_key(match: re.Match[str]) -> str | None:
    # Vendor prefixes are also ordinary words ("sk-onboarding-checklist"); a real key has a long random run.
    return breadcrumb(API_KEY) if any(_mixed(run) for run in _RUN.findall(match.group(0))) else None


def _always(kind: str) -> Validator:
    return lambda match: _swap(match, "secret", breadcrumb(kind))


def _slack(match: re.Match[str]) -> str | None:
    return breadcrumb(API_KEY) if sum(c.isdigit() for c in match.group(0)) >= 4 else None


def _aws_secret(match: re.Match[str]) -> str | None:
    value = match.group("secret")
    # A 40-character hex string near these words is a git SHA or a digest, not a key.
    if not _mixed(value) or re.fullmatch(r"[0-9a-f]{40}|[0-9A-F]{40}", value):
        return None
    return _swap(match, "secret", breadcrumb(API_KEY))


# Values that name a secret without being one: masks, templates, references, and prose after a label.
_PLACEHOLDER = re.compile(
    r"(?i)\[redacted:[^\]]*\]|\$\{?\w+\}?|\{\{.*\}\}|%\(\w+\)s|%s|[*•x#?._-]+|your[-_ ].*"
    r"|none|null|nil|undefined|true|false|empty|unset|redacted|hidden|masked|placeholder|example"
    r"|secret|token|password|passwd|passphrase|api[_-]?key"
)
_PROSE = frozenset(
    "the a an your my our their his her its this that same see use ask set reset change changed check enter type "
    "not no yes is was are must should will can cannot at in on for to from with via by and or stored saved sent "
    "shared updated expired forgotten rotated managed strong weak incorrect wrong invalid protected enabled "
    "disabled policy manager field hint prompt length rules requirements required optional unchanged".split()
)
_LABEL_WORD = re.compile(r"(?i)pass(?:word|wd|phrase)|token|secret|key")
_CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]")


def _credential_like(value: str) -> bool:
    """For labels also common in prose ("the secret is out"): the value must look generated."""
    upper = sum(c.isupper() for c in value[1:])
    classes = (any(c.islower() for c in value), upper > 0, any(c.isdigit() for c in value),
               any(not c.isalnum() and c not in "-_.'" for c in value))
    return len(value) >= 6 and sum(classes) >= 2


def _assignment(kind: str, min_len: int, strict: bool = False) -> Validator:
    def validate(match: re.Match[str]) -> str | None:
        group = next(name for name in ("dq", "sq", "bare") if match.group(name) is not None)
        value = match.group(group)
        tail = len(value) - len(value.rstrip(".,;:)]}")) if group == "bare" else 0
        value = value[: len(value) - tail]
        if len(value) < min_len or value.lower() in _PROSE or _PLACEHOLDER.fullmatch(value):
            return None
        prose = match.group("prose") is not None or (kind == TOKEN and group == "bare" and ":" in match.group("sep"))
        if (strict or prose) and not _credential_like(value):
            return None
        # Code that reads a secret (password=get_password(), token=self.token) holds none itself.
        if group == "bare" and (_CODE.match(value) or (not any(c.isdigit() for c in value) and (
                "." in value or ("_" in value and _LABEL_WORD.search(value))))):
            return None
        return _swap(match, group, breadcrumb(kind), tail)

    return validate


def _ssn_shape(area: str, group: str, serial: str) -> bool:
    # The SSA never issues these, so such numbers are dates, part numbers and the like.
    return area not in {"000", "666"} and not area.startswith("9") and group != "00" and serial != "0000"


def _ssn(match: re.Match[str]) -> str | None:
    if not _ssn_shape(match.group("area"), match.group("group"), match.group("serial")):
        return None
    return _swap(match, "secret", breadcrumb(SSN))


_DIGITS = re.compile(r"\d+")
_DOUBLED = str.maketrans("0123456789", "0246813579")  # a doubled digit, less 9 when over 9


def luhn_valid(digits: str) -> bool:
    return sum(map(int, digits[-1::-2] + digits[-2::-2].translate(_DOUBLED))) % 10 == 0


def _card_ends(lengths: list[int]) -> list[int]:
    """Where a card starting at the first of these groups can end (indexes into ``lengths``):
    one run of 13-19 digits, Amex 4-6-5, Diners 4-6-4, or groups of four and a shorter rest."""
    if 13 <= lengths[0] <= 19:
        return [0]
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
        if text[start] not in "23456":  # payment cards start with 2-6; ms timestamps with 1
            continue
        for end in _card_ends(lengths[first: first + 5]):
            low, high = offsets[first], offsets[first + end + 1]
            series = sums[(high - 1) % 2]
            if (series[high] - series[low]) % 10 == 0:
                hits.append((first, first + end, digits[high - 4: high]))
    return hits


def _card(match: re.Match[str]) -> str | None:
    """A run of digit groups may hold a card among other numbers (a CVV, an expiry, a reference):
    every window that is a card is redacted; overlapping windows share one breadcrumb."""
    text = match.group(0)
    if len(text) < 13:
        return None
    spans = [(m.start(), m.end()) for m in _DIGITS.finditer(text)]
    hits = _card_windows(text, spans)
    if not hits:
        return None
    out: list[str] = []
    cursor = index = 0
    while index < len(hits):
        first, last, ending = hits[index]
        while index + 1 < len(hits) and hits[index + 1][0] <= last:
            index += 1
            last = max(last, hits[index][1])
        out += [text[cursor: spans[first][0]], f"[redacted:{CARD_NUMBER} ending {ending}]"]
        cursor, index = spans[last][1], index + 1
    return "".join([*out, text[cursor:]])


def _labelled(words: str) -> str:
    """A label (``password``, ``DB_PASSWORD``, ``"dbPassword"``, ``x-api-key``), a separator and a value."""
    return (
        r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,40}?(?i:" + words + r")[\"']?"
        r"(?:[ \t]+(?i:for|to|of|on)(?:[ \t]+[A-Za-z0-9@._-]{1,30}){1,3})?"  # "password for the router is ..."
        r"(?:(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)|(?P<prose>[ \t]+(?i:is|was):?[ \t]+))"
        r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"'`<>\[][^\s\"'`<>]{0,199}))"
    )


_BOUNDARY = r"(?<![A-Za-z0-9_-])"

RULES: tuple[Rule, ...] = (
    Rule("pem_private_key", PRIVATE_KEY, re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.DOTALL),
        lambda match: breadcrumb(PRIVATE_KEY)),
    Rule("jwt", TOKEN, re.compile(
        _BOUNDARY + r"(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)"), _always(TOKEN)),
    Rule("aws_access_key_id", API_KEY, re.compile(
        r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![A-Za-z0-9])"), _always(API_KEY)),
    Rule("google_api_key", API_KEY, re.compile(
        _BOUNDARY + r"(?P<secret>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"), _always(API_KEY)),
    Rule("vendor_key", API_KEY, re.compile(
        _BOUNDARY + r"(?:(?:sk|pk)-[A-Za-z0-9_-]{16,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"
        r"|whsec_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
        r"|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,})"), _random_key),
    Rule("slack_token", API_KEY, re.compile(_BOUNDARY + r"(?:xox[abeprs]|xapp)-[A-Za-z0-9-]{10,}"), _slack),
    Rule("slack_webhook", TOKEN, re.compile(
        r"hooks\.slack\.com/services/(?P<secret>T[A-Za-z0-9_]{6,}/B[A-Za-z0-9_]{6,}/[A-Za-z0-9_]{16,})"),
        _always(TOKEN)),
    Rule("aws_secret_access_key", API_KEY, re.compile(
        r"(?i:aws_?secret_?access_?key|secret[ _-]?access[ _-]?key)[^\n]{0,40}?"
        r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), _aws_secret),
    Rule("url_credentials", PASSWORD, re.compile(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s:/@]{1,64}:(?P<secret>[^\s:/@]{1,128})@"),
        lambda match: None if _PLACEHOLDER.fullmatch(match.group("secret")) else
        _swap(match, "secret", breadcrumb(PASSWORD))),
    Rule("authorization_header", TOKEN, re.compile(
        r"(?<![A-Za-z0-9])(?i:bearer|basic)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{12,}=*)"),
        lambda match: _swap(match, "secret", breadcrumb(TOKEN)) if _credential_like(match.group("secret")) else None),
    Rule("password_assignment", PASSWORD, re.compile(_labelled(r"pass(?:word|wd|phrase)")), _assignment(PASSWORD, 4)),
    Rule("short_password_label", PASSWORD, re.compile(_labelled(r"pass|pw")), _assignment(PASSWORD, 6, strict=True)),
    Rule("token_assignment", TOKEN, re.compile(
        _labelled(r"token|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key")), _assignment(TOKEN, 8)),
    Rule("ssn_labelled", SSN, re.compile(
        r"(?<![A-Za-z])(?i:ssn|social[ \t]+security(?:[ \t]+(?:number|no\.?|num|#))?)[^\d\n]{0,30}?(?<!\d)"
        r"(?P<secret>(?P<area>\d{3})[-. ]?(?P<group>\d{2})[-. ]?(?P<serial>\d{4}))(?!\d)"), _ssn),
    Rule("ssn", SSN, re.compile(
        r"(?<![\w.-])(?P<secret>(?P<area>\d{3})[-.](?P<group>\d{2})[-.](?P<serial>\d{4}))(?![\w-]|\.\d)"), _ssn),
    Rule("ssn_spaced", SSN, re.compile(
        r"(?<![\w.-])(?<!\d )(?P<secret>(?P<area>\d{3}) (?P<group>\d{2}) (?P<serial>\d{4}))(?![\w.-]| \d)"), _ssn),
    Rule("card_number", CARD_NUMBER, re.compile(
        r"(?<![A-Za-z0-9_])(?<!\d[ .-])(?<!\d[ .-]{2})(?<!\d[ .-]{3})\d+(?:(?: {1,2}| ?[.-] ?)\d+)*"), _card),
)


def redact(text: str) -> Redaction:
    kinds: list[str] = []
    for rule in RULES:

        def substitute(match: re.Match[str], rule: Rule = rule) -> str:
            replacement = rule.validate(match)
            if replacement is None:
                return match.group(0)
            if rule.kind not in kinds:
                kinds.append(rule.kind)
            return replacement

        text = rule.pattern.sub(substitute, text)
    return Redaction(text=text, kinds=tuple(kinds))


def refuse_secret(name: str, value: str, refusal: type[InvalidInput] = InvalidInput) -> None:
    """Identifiers (sources, skill slugs, scopes, message and session ids) pass the same gate as
    text but are refused, never redacted: a redacted identifier would silently name something else.
    ``refusal`` is the error raised (a field of a command is refused as ``InvalidField``)."""
    kinds = redact(value).kinds
    if kinds:
        raise refusal(f"{name} looks like it contains a secret ({', '.join(kinds)}); {name}s are identifiers")

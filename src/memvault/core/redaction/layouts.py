"""Secrets laid out apart from their label: the value before it ("use `blue-Elephant-42` as the
password", "set 4921 as my PIN"); the value alone on the line after it (``DB_PASSWORD=`` and the
value below, YAML's ``password: |``); a user and password given as a pair after a login word
("login with admin:Sup3rS3cret!", "credentials are bob / …", "wifi: HomeNet / Gr33nField!"); and
a Markdown table's cell under a credential's column or beside a credential's name; a CSV
export's field under a credential's column (a password manager's or a browser's export), and
SQL's ``INSERT`` value under one; a value a sentence sets a credential's name to ("set
`SMTP_PASSWORD` to `…`"); and what a shell or a notebook prints for an expression that reads a
credential (``In [3]:`` and an environment lookup, then ``Out[3]: '…'``; ``$ echo $DB_PASSWORD``
then the value); and a password a chat tells in passing: as "one" after its label ("my Target
password is … and my Walmart one is …"), asked about ("is 'Buster1987' a strong password?"),
changed ("my password from … to …"), or a PIN or a card's code told in words."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.core.redaction.labels import (
    LABEL_WORDS,
    PASSWORD,
    STRONG,
    kind_of,
    label_strength,
    value_is_secret,
)
from memvault.core.redaction.numbers import CARD_CODE, DIGIT_WORD
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import classes, generated, prose

# The value named before its label: "… as the password", "… is my API key", "… was the staging token".
_AS_LABEL = re.compile(r"[ \t]+(?:as|is|was)[ \t]+(?:(?:the|my|your|our|his|her|their|a|an|new|old|current)[ \t]+){0,2}"
                       r"(?:[A-Za-z][a-z0-9-]{1,15}[ \t]+)?"
                       r"(?P<label>(?i:pass(?:word|phrase|code)|pin|secret|token|api[ _-]?key|private[ _-]?key))(?![A-Za-z0-9])"
                       # The label ends its noun: "… is the password regex we use" names a regex; a
                       # conjunction starts the next clause ("… as the password and it said …").
                       r"(?![ \t]+(?!(?:for|to|on|at|in|of|from|with|we|i|you|that|and|but|or|so|then|because|when)"
                       r"(?![a-z]))[a-z])")
_QUOTES = "`\"'"
_CLAUSE_ENDS = re.compile(r"[ \t]*(?:$|[.,;:!?)\n])")
_LONGEST_BEFORE_AS = 100
# A label that ends its line after a separator (and YAML's block indicator); its value is the
# whole next line, one token.
# Lines that end in a separator are rare, so they are found first and the word is looked for
# only just before one.
_SEPARATOR_ENDS_LINE = re.compile(r"(?::=|=|:)[ \t]*(?:[|>][-+]?)?[ \t]*\r?\n")
_LABEL_BEFORE_SEPARATOR = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<label>[A-Za-z0-9_.-]{0,40}?(?i:" + LABEL_WORDS + r"))(?![A-Za-z0-9])\\?[\"']?[ \t]*\Z"
)
_LABEL_REACH = 80
_NEXT_LINE = re.compile(r"(?P<blank>[ \t]*\r?\n)?[ \t]*(?P<value>\S{3,300}?)[ \t]*(?=\r?\n|\Z)")
# A PIN's label on a line of its own and its digits alone on the next ("PIN" and ``4419`` below it).
_PIN_LINE = re.compile(r"(?m)^[ \t]*(?:[A-Za-z]{1,20}[ \t]){0,2}(?i:pin(?:[ -]?code)?|passcode)[ \t]*\r?\n[ \t]*"
                       r"(?P<value>\d{4,12})[ \t]*(?=\r?\n|\Z)")
# A password's label alone on its line, no separator after it, and the value alone on the next.
_LABEL_LINE = re.compile(
    r"(?m)^[ \t]*(?P<label>(?:[A-Za-z]{1,20}[ \t]){0,2}(?i:pass(?:word|wd|phrase|code)|pwd|pw))[ \t]*\r?\n"
    r"[ \t]*(?P<value>\S{6,300}?)[ \t]*(?=\r?\n|\Z)"
)
# "use … to log in": the value before what it is used for.
_USED_TO_LOG_IN = re.compile(
    r"(?<![\w-])(?i:use|try|enter|type)[ \t]+(?P<value>[^\s\"'`]{8,100})[ \t]+(?i:to|for)[ \t]+"
    r"(?i:log[ \t-]?(?:in|on)(?:to)?|sign[ \t-]?(?:in|on)(?:to)?|get[ \t]+in|unlock)(?![\w])"
)
# "use this to log in, don't share it: …": what it is for, then a colon and the value.
_FOR_LOGGING_IN = re.compile(
    r"(?<![\w-])(?i:log[ \t-]?(?:in|on)|sign[ \t-]?(?:in|on)|get[ \t]+in|unlock)(?![\w])[^\n:.?!]{0,40}:[ \t]*"
    r"(?P<value>[^\s\"'`]{8,100})"
)
# "to unlock my phone it's 914273": digits told as what unlocks a device, the code that guards it.
_UNLOCKED_WITH_DIGITS = re.compile(
    r"(?<![\w-])(?i:unlock)[ \t]+(?i:my|the|your|his|her|our|their)[ \t]+(?i:phone|iphone|tablet|ipad|laptop|computer|pc|mac|sim)"
    r"(?:[ \t]*,)?[ \t]+(?i:it's|it[ \t]+is|is|use|type|enter)[ \t]+(?P<value>\d{4,10})(?=[ \t]*(?:[,.;!)]|\r?\n|\Z|(?i:if|and|but|so|in)\b))"
)
# A key or lock emoji standing for the label ("🔑 …").
# A key or a lock emoji stands for a password's label, before the value or before what it is for
# ("🔐 bank: …").
_KEY_EMOJI = re.compile("(?:\U0001f511|\U0001f510|\U0001f512|\U0001f5dd\ufe0f?)"
                        r"[ \t]*(?:[\w.'-]{1,20}(?:[ \t][\w.'-]{1,20})?(?:[ \t]*[:=]|[ \t]+-))?[ \t]*:?[ \t]*(?P<value>[^\s\"'`]{8,100})")
_PIN_WORD = re.compile(r"(?<![a-z])pin(?![a-z])")
_PASSWORD_NAME = r"(?i:pass(?:word|wd|phrase|code)|pwd|pin)"
# "one" standing for a password named earlier in the line ("the current one is …", "my Walmart one
# is …"): the label must be within ``_ONE_REACH`` before it.
_ONE_IS = re.compile(
    r"(?<![\w-])(?i:my|the|our|his|her|their|your|this|that)(?:[ \t]+[\w'-]{1,20}){0,2}?[ \t]+(?i:one)"
    r"[ \t]+(?i:is|was)[ \t]+(?P<value>[^\s\"'`,;]{4,64})"
)
_ONE_REACH = 160
_NAMED = re.compile(r"(?<![\w-])" + _PASSWORD_NAME + r"(?![\w-])")
# "'s" for "is" after a password's or a PIN's name ("my pin's 4821"), or the name asked and answered
# on one line ("The password? It's …").
_CONTRACTED = re.compile(
    r"(?<![\w-])(?:(?P<pin>(?i:pin))|(?i:pass(?:word|wd|phrase|code)|pwd))(?:'s|[ \t]*\?[ \t]+(?i:it's|it[ \t]+is|its))"
    r"[ \t]+(?:(?i:now|still|just)[ \t]+)?(?P<value>[^\s\"'`,;]{4,64}?)(?=[.!?]?(?:[\s\"'`,;]|\Z))"
)
# A PIN told in words after its name ("card PIN: four-seven-one-nine", "Die PIN ist vier acht zwei
# sieben"), four digits' words or more.
_PIN_IN_WORDS = re.compile(
    r"(?<![\w-])(?i:pin(?:[ -]?(?:code|nummer))?|passcode)(?:[ \t]*[:=]|[ \t]+(?i:is|ist|es|est|lautet|è|é))[ \t]*"
    r"(?P<value>(?i:" + DIGIT_WORD + r"(?:[ \t]*[ ,-][ \t]*" + DIGIT_WORD + r"){3,11}))(?![\w-])"
)
_CARD_CODE_IN_WORDS = re.compile(
    r"(?<![\w-])(?i:cvv2?|cvc2?)(?:[ \t]*[:=]|[ \t]+(?i:is|es|est|ist))?[ \t]*"
    r"(?P<value>(?i:" + DIGIT_WORD + r"(?:[ \t]*[ ,-][ \t]*" + DIGIT_WORD + r"){2,3}))(?![\w-])"
)
# A value asked about as a password ("Is 'Buster1987' a strong enough password?").
_ASKED_ABOUT = re.compile(
    r"(?P<quote>[\"'`])(?P<value>[^\s\"'`]{4,64})(?P=quote)[ \t]+(?:(?i:be|is|was|as|for)[ \t]+)?(?i:a|an|the|my)(?:[ \t]+[\w-]{1,15}){0,3}?[ \t]+"
    + _PASSWORD_NAME + r"(?![\w-])"
)
# A password changed from one value to another ("my outlook password from Greenbay12 -> …").
_CHANGED_FROM = re.compile(
    r"(?<![\w-])" + _PASSWORD_NAME + r"(?:[ \t]+[\w'-]{1,20}){0,3}?[ \t]+(?i:from)[ \t]+(?P<old>[^\s\"'`,;]{4,64})"
    r"[ \t]+(?:(?i:to)|->|=>|\u2192)[ \t]+(?P<new>[^\s\"'`,;]{4,64})"
)
# What a command lists may be a file's path (``gpg --list-secret-keys`` prints its keyring's first).
_FILE_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)+/?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
# A next line that assigns a name of its own is the next setting, not the value left empty above.
_SETTING = re.compile(r"[A-Za-z_][\w.-]{0,60}[ \t]*=")
_TABLE_ROW = re.compile(r"[ \t]*\|[^\n]{1,2000}\|[ \t]*\r?(?=\n|\Z)")
_CELL = re.compile(r"(?<=\|)[^|\n]+(?=\|)")
_RULE_ROW = re.compile(r"(?m)^[ \t]*\|(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*\r?$")
# A CSV header: short names separated by commas, semicolons or tabs, one of them a credential's.
_CSV_HEADER = re.compile(r"(?m)^[ \t]*(?:\"?[A-Za-z][\w .-]{0,30}\"?[,;\t]){1,30}\"?[A-Za-z][\w .-]{0,30}\"?[ \t]*\r?$")
_CSV_ROW = re.compile(r"[^\n]{1,4096}")
# A leaked login as lists of them give it, an address and its password joined by a colon
# (``jane@example.com:…``); a path after the colon is a copy's or a clone's source (``git@host:repo``).
_ADDRESS_PAIR = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+:(?P<secret>[^\s/'\"`:,;]{6,100})")
# The same login given as a URL's userinfo without its scheme (``bob:…@smtp.example.com``), when the
# password mixes three kinds of character: a ratio or a time before ``@`` mixes fewer.
_HOST_PAIR = re.compile(r"(?<![\w.+/:@-])[\w.+-]{1,64}:(?P<secret>[^\s/'\"`:,;@]{6,100})@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
# A system's own account joined to its password (``root=…``, ``admin: …``, ``postgres/…``), as a
# list of servers' logins gives it. The value must mix three kinds of character and read as no
# code (``root=Node(5)``) or path, since such names are settings' and variables' names too.
_ACCOUNT_PAIR = re.compile(
    r"(?i)(?<![\w.$/-])(?:root|admin|administrator|sa|sysadmin|superuser|postgres|mysql|oracle|ubuntu|pi|"
    r"ec2-user|guest|operator)(?:[ \t]*[=/][ \t]*|:[ \t]*)(?P<secret>[^\s/'\"`:,;]{6,100})"
)
# The account names above as lower-case text holds them: the short ones only beside a separator.
_ACCOUNT_STEMS = ("root", "admin", "postgres", "mysql", "oracle", "ubuntu", "ec2-user", "guest", "operator", "superuser",
                  "sa=", "sa:", "sa/", "sa =", "sa /", "pi=", "pi:", "pi/", "pi =", "pi /")
_PAIR = re.compile(
    r"(?i)(?<![\w-])(?:log[ -]?ins?|sign[ -]?in|credentials?|creds|account|wi-?fi|wlan)"
    # What the login is for ("the login for the NAS is …"), a few words at most.
    r"(?:[ \t]+(?:for|to|on|at|of)(?:[ \t]+[\w.@-]{1,30}){1,3}?(?=[ \t]+(?:is|are)\b|[ \t]*[:,]))?"
    r"(?:[ \t]+(?:with|is|are|as|for|details))?[ \t]*[:=,-]?[ \t]*"
    r"(?P<user>[\w.@+-]{1,64})(?:[ \t]*/[ \t]*|:)(?P<secret>[^\s/'\"`:,;]{6,100})"
)


_SET_TO = re.compile(
    r"(?<![\w-])(?i:set|change|update)[ \t]+(?:(?i:the)[ \t]+)?(?P<q1>[`\"']?)(?P<label>[A-Za-z][\w.-]{1,60})(?P=q1)"
    r"[ \t]+(?i:to)[ \t]+(?P<q>[`\"']?)(?P<value>[^\s`\"']{3,300})(?P=q)"
)
# What a credential's name that a sentence sets holds (``SMTP_PASSWORD``, ``api key``, ``pw``).
_SET_TO_WORDS = ("pass", "pw", "secret", "token", "key", "pin", "cred", "auth")
# An interactive prompt and the expression after it, then the line that prints its value. The
# value's line is looked at, not taken, so a prompt printed below another prompt is read too.
_PROMPT_LINE = re.compile(
    r"(?m)^[ \t]*(?:In[ \t]*\[\d+\]:|>>>|\$|[\w@.:~-]{1,60}\$|irb\([^)\n]{0,30}\)[^>\n]{0,10}>|>)"
    r"[ \t]*(?P<expression>[^\n]{1,200})\r?\n(?=[ \t]*(?:Out[ \t]*\[\d+\]:|=>)?[ \t]*(?P<value>[^\s][^\n]{0,299}?)[ \t]*\r?$)"
)
# IPython's prompt and what it printed on one line, as a one-line chat input or a chunk's carried
# overlap joins them.
_PROMPT_INLINE = re.compile(
    r"In[ \t]*\[\d+\]:[ \t]*(?P<expression>[^\n]{1,200}?)[ \t]+Out[ \t]*\[\d+\]:[ \t]*(?P<value>[^\s]{1,300})"
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,60}")
_INSERT = re.compile(
    r"(?i:insert[ \t]+into)[ \t]+[\w.\"`\[\]]{1,80}[ \t]*\((?P<columns>[^()\n]{1,500})\)[ \t]*(?i:values)[ \t]*"
    r"\((?P<values>[^()\n]{1,2000})\)"
)
_SQL_VALUE = re.compile(r"[ \t]*(?:'(?P<quoted>(?:[^'\n]|'')*)'|(?P<bare>[^,'\n]*?))[ \t]*(?:,|\Z)")


def set_to(text: str) -> Iterator[Hit]:
    lowered = text.lower()  # one pass in C spares most text the pattern's scan
    if not any(verb in lowered for verb in ("set ", "change ", "update ")) or not any(word in lowered for word in _SET_TO_WORDS):
        return
    for match in _SET_TO.finditer(text):
        label, value = match.group("label"), match.group("value")
        # Unquoted, "set the password to expire" goes on a sentence: only a made value counts.
        quoted = bool(match.group("q"))
        if label_strength(label) == STRONG and value_is_secret(label, value, sentence=not quoted) \
                and (quoted or generated(value, 6)):
            yield Hit(match.start("value"), match.end("value"), kind_of(label))


def printed_values(text: str) -> Iterator[Hit]:
    matches = [*(_PROMPT_LINE.finditer(text) if "\n" in text else ()),
               *(_PROMPT_INLINE.finditer(text) if "Out" in text else ())]
    for match in matches:
        names = [name for name in _NAME.findall(match.group("expression")) if label_strength(name) is not None]
        value = match.group("value")
        stripped = value.strip("'\"")
        # What a prompt prints for a credential looks made; a word below a line that starts with "$"
        # or ">" is more likely the next sentence.
        if names and " " not in stripped and generated(stripped, 6) and value_is_secret(names[-1], stripped) \
                and not _FILE_PATH.fullmatch(stripped):
            start = match.start("value") + value.index(stripped)
            yield Hit(start, start + len(stripped), kind_of(names[-1]))


def inserted_values(text: str) -> Iterator[Hit]:
    if "nsert" not in text and "NSERT" not in text:
        return
    for match in _INSERT.finditer(text):
        columns = [column.strip().strip("\"`[]") for column in match.group("columns").split(",")]
        if all(label_strength(column) is None for column in columns):
            continue
        position, end = match.start("values"), match.end("values")
        for column in columns:
            value = _SQL_VALUE.match(text, position, end)
            if value is None:
                break
            group = "quoted" if value.group("quoted") is not None else "bare"
            literal = value.group(group).strip()
            if literal and label_strength(column) is not None and value_is_secret(column, literal):
                start = value.start(group) + value.group(group).index(literal)
                yield Hit(start, start + len(literal), kind_of(column))
            position = value.end()


def reversed_assignments(text: str) -> Iterator[Hit]:
    for match in _AS_LABEL.finditer(text):
        span = _word_before(text, match.start())
        if span is None:
            continue
        (start, end), label = span, match.group("label")
        value, quoted = text[start:end], end < match.start()
        # Said to be one's password and nothing more ("hunter2 is my password."), a word holding a
        # digit or a symbol is one, however weak.
        owned = kind_of(label) == PASSWORD and _CLAUSE_ENDS.match(text, match.end()) is not None and classes(value) >= 2
        if prose(value) or not value_is_secret(label, value) or not (quoted or generated(value) or owned):
            continue
        yield Hit(start, end, kind_of(label))


def told_values(text: str) -> Iterator[Hit]:
    """A password a sentence tells in passing, away from its label: "one" standing for it, a value
    asked about as one, after "'s" or its name asked and answered, or its old and new values."""
    lowered = text.lower()  # one pass in C spares most text the patterns' scans
    if not any(word in lowered for word in ("passw", "passc", "passp", "pwd", "cvv", "cvc")) and _PIN_WORD.search(lowered) is None:
        return
    for match in _ONE_IS.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if _NAMED.search(text, max(line_start, match.start() - _ONE_REACH), match.start()) is not None:
            yield from _told(match, "value")
    for match in _ASKED_ABOUT.finditer(text):
        yield from _told(match, "value")
    for match in _CONTRACTED.finditer(text):
        if match.group("value").isdigit():
            if match.group("pin") is not None and 4 <= len(match.group("value")) <= 12:
                yield Hit(match.start("value"), match.end("value"), PASSWORD)
        else:
            yield from _told(match, "value")
    for match in _CHANGED_FROM.finditer(text):
        yield from _told(match, "old", "new")
    for match in _PIN_IN_WORDS.finditer(text):
        yield Hit(match.start("value"), match.end("value"), PASSWORD)
    for match in _CARD_CODE_IN_WORDS.finditer(text) if "cv" in lowered else ():
        yield Hit(match.start("value"), match.end("value"), CARD_CODE)


def _told(match: re.Match[str], *groups: str) -> Iterator[Hit]:
    """The values of ``groups`` that read as a password (a digit or a symbol in it, no word alone)."""
    for group in groups:
        value = match.group(group).rstrip(".!?)")
        if classes(value) >= 2 and not prose(value) and value_is_secret(PASSWORD, value):
            yield Hit(match.start(group), match.start(group) + len(value), PASSWORD)


def _word_before(text: str, end: int) -> tuple[int, int] | None:
    """The quoted value or the word that ends at ``end``, at most ``_LONGEST_BEFORE_AS`` long."""
    if end > 0 and text[end - 1] in _QUOTES:
        opening = text.rfind(text[end - 1], max(0, end - _LONGEST_BEFORE_AS - 2), end - 1)
        inside = text[opening + 1:end - 1]
        if opening < 0 or len(inside) < 3 or "\n" in inside:
            return None
        return opening + 1, end - 1
    start = end
    while start > 0 and end - start <= _LONGEST_BEFORE_AS and not text[start - 1].isspace():
        start -= 1
    if end - start < 6 or end - start > _LONGEST_BEFORE_AS:
        return None
    return start, end


def next_line_values(text: str) -> Iterator[Hit]:
    for separator in _SEPARATOR_ENDS_LINE.finditer(text):
        line = _NEXT_LINE.match(text, separator.end())
        # A nested mapping's key or a list item opens the next level rather than giving a value.
        if line is None or line.group("value").endswith(":") or line.group("value").startswith("-") \
                or _SETTING.match(line.group("value")):
            continue
        # After a blank line the value must look made: a heading or a word may as well start a section there.
        if line.group("blank") is not None and (classes(line.group("value")) < 3 or not generated(line.group("value"))):
            continue
        line_start = text.rfind("\n", max(0, separator.start() - _LABEL_REACH), separator.start()) + 1
        match = _LABEL_BEFORE_SEPARATOR.search(text, max(line_start, separator.start() - _LABEL_REACH), separator.start())
        if match is None or label_strength(label := match.group("label")) != STRONG:
            continue
        if value_is_secret(label, line.group("value")):
            yield Hit(line.start("value"), line.end("value"), kind_of(label))


def label_lines(text: str) -> Iterator[Hit]:
    """A password's label on a line of its own and the value alone on the next, shaped as one
    ("Password" and ``Nxt!Line-pw3`` below it), or a PIN's above its digits; a value after a key emoji
    ("🔑 …", "🔐 bank: …"); "use … to log
    in"; "to log in: …"; and "to unlock my phone it's …"."""
    if "\n" in text:
        for match in _LABEL_LINE.finditer(text):
            value = match.group("value")
            if classes(value) >= 3 and generated(value) and value_is_secret(match.group("label"), value):
                yield Hit(match.start("value"), match.end("value"), PASSWORD)
        for match in _PIN_LINE.finditer(text):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)
    if not text.isascii():
        for match in _KEY_EMOJI.finditer(text):
            value = match.group("value")
            if classes(value) >= 3 and generated(value):
                yield Hit(match.start("value"), match.end("value"), PASSWORD)
    lowered = text.lower()  # one pass in C spares most text the pattern's scan
    if not any(word in lowered for word in ("log", "sign", "get in", "unlock")):
        return
    for match in _UNLOCKED_WITH_DIGITS.finditer(text):
        yield Hit(match.start("value"), match.end("value"), PASSWORD)
    for pattern in (_USED_TO_LOG_IN, _FOR_LOGGING_IN):
        for match in pattern.finditer(text):
            value = match.group("value")
            if classes(value) >= 3 and generated(value) and not _EMAIL.search(value) and not prose(value):
                yield Hit(match.start("value"), match.end("value"), PASSWORD)


def table_cells(text: str) -> Iterator[Hit]:
    """A header names a column a credential's (``| user | password |``), or a row's first cell
    names the credential the next cell holds (``| DB_PASSWORD | … |``). A table is found by its
    delimiter row (``|---|---|``): the line before it is the header (whatever precedes its first
    ``|``), and the rows that follow it are the body."""
    if "|-" not in text and "| -" not in text and "|:" not in text:
        return
    scanned = 0  # rows before this were read as a body already
    for rule in _RULE_ROW.finditer(text):
        if rule.start() < scanned:
            continue
        header_start = text.rfind("\n", 0, max(0, rule.start() - 1)) + 1
        header = text.find("|", header_start, rule.start())
        columns = {}
        if header >= 0:
            columns = {index: label for index, cell in enumerate(_CELL.finditer(text, header, rule.start()))
                       if label_strength(label := cell.group(0).strip()) == STRONG}
        position = rule.end() + 1
        while (row := _TABLE_ROW.match(text, position)) is not None:
            cells = [(cell.start(), cell.end()) for cell in _CELL.finditer(text, row.start(), row.end())]
            for index, (start, end) in enumerate(cells):
                label = columns.get(index) or (text[cells[index - 1][0]:cells[index - 1][1]].strip() if index else "")
                hit = _cell_secret(text, start, end, label)
                if hit is not None:
                    yield hit
            position = row.end() + 1
        scanned = position


def _cell_secret(text: str, start: int, end: int, label: str) -> Hit | None:
    if not label or label_strength(label) != STRONG:
        return None
    cell = text[start:end]
    value = cell.strip().strip("`")
    # A cell of words describes its row ("| password | the database's password |").
    if not value or any(c.isspace() for c in value) or not value_is_secret(label, value):
        return None
    offset = start + cell.index(value)
    return Hit(offset, offset + len(value), kind_of(label))


def login_pairs(text: str) -> Iterator[Hit]:
    for match in _PAIR.finditer(text):
        secret = match.group("secret").rstrip(".)")
        # A number before the slash is a date or a count ("2024/Q3-report"), not a user.
        if not match.group("user").isdigit() and generated(secret, 6):
            yield Hit(match.start("secret"), match.start("secret") + len(secret), PASSWORD)
    lowered = text.lower()
    for match in _ACCOUNT_PAIR.finditer(text) if any(name in lowered for name in _ACCOUNT_STEMS) else ():
        secret = match.group("secret").rstrip(".)")
        if classes(secret) >= 3 and value_is_secret(PASSWORD, secret):
            yield Hit(match.start("secret"), match.start("secret") + len(secret), PASSWORD)
    if "@" in text:
        for match in _ADDRESS_PAIR.finditer(text):
            secret = match.group("secret").rstrip(".)")
            # A file's or a reference's name has its dot or underscore: a password mixes or is random.
            if classes(secret) >= 3 or (generated(secret, 8) and not any(c in secret for c in "._")):
                yield Hit(match.start("secret"), match.start("secret") + len(secret), PASSWORD)
        for match in _HOST_PAIR.finditer(text):
            if classes(match.group("secret")) >= 3:
                yield Hit(match.start("secret"), match.end("secret"), PASSWORD)


def csv_columns(text: str) -> Iterator[Hit]:
    """The rows below a CSV header that names a credential's column, while they have its fields."""
    if "\n" not in text:
        return
    scanned = 0  # lines before this were read as rows already
    for header in _CSV_HEADER.finditer(text):
        if header.start() < scanned:
            continue
        line = header.group(0).strip()
        separator = next(c for c in line if c in ",;\t")
        names = [name.strip().strip('"') for name in line.split(separator)]
        if any(c in line for c in ",;\t".replace(separator, "")):
            continue
        columns = {index: name for index, name in enumerate(names) if label_strength(name) == STRONG}
        if not columns:
            continue
        position = header.end() + 1
        while (row := _CSV_ROW.match(text, position)) is not None:
            fields = row.group(0).rstrip("\r").split(separator)
            if len(fields) != len(names):
                break
            offset = row.start()
            for index, field in enumerate(fields):
                value = field.strip().strip('"')
                if index in columns and value and not any(c.isspace() for c in value) \
                        and value_is_secret(columns[index], value):
                    start = offset + field.index(value)
                    yield Hit(start, start + len(value), kind_of(columns[index]))
                offset += len(field) + 1
            position = row.end() + 1
        scanned = position

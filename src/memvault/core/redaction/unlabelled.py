"""Secrets that no label names as one: a value that a password rule made (lower and upper case,
digits and a symbol inside it, "here you go: Wq7#tLm2-Zp9"); an answer given on the lines after a
question that asks for a credential ("what's the wifi?" then "Blue-Heron2291" below, a speaker's
name before it); groups spaced for reading before "(no spaces)"; and a password's label written
wrong on purpose or by slip (``p4ssw0rd``, ``P@ssw0rd``, ``pasword``, ``passwrod``, ``pass_word``,
``p a s s w o r d``, Cyrillic letters that look Latin), whose value is then read as under the label
itself."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.core.redaction.labels import PASSWORD, PUBLIC_KEY_TYPE, value_is_secret
from memvault.core.redaction.languages import PASSWORD_ABROAD
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import classes, generated, names_no_secret_code, placeholder, prose

# Symbols a password rule asks for. ``-``, ``.``, ``_`` and ``/`` are left out: they join the words
# of names, versions and paths (``GPT-4o-mini``, ``Python3.11``); ``+`` and ``=`` fill base64.
_RULE_SYMBOLS = "!#$%&*?@^~"
# Printable ASCII only: a password typed on any keyboard is, and a run of another script is a sentence.
_RUN_CHARACTER = r"[^\s\"'`<>()\[\]{}|,;\x7f-\U0010ffff]"
_RUN = re.compile(_RUN_CHARACTER + "{8,200}")
_RUN_CHARACTERS = re.compile(_RUN_CHARACTER)
_RUN_ENDS = frozenset(" \t\r\n\x0b\x0c\"'`<>()[]{}|,;")
# Starting with the symbols (no look behind first) lets the scan skip ahead to one.
_INNER_SYMBOL = re.compile(r"[!#$%&*?@^~]+(?=" + _RUN_CHARACTER + ")")
_SHAPE_LONGEST = 40
_USER_AND_SLASH = re.compile(r"(?<![^\s:])[\w.@+-]{1,64}[ \t]*/[ \t]*\Z")
_USER_REACH = 70
# One is enough too where a value is handed over: alone after a colon at the end of its line
# ("here you go: Harbor!Lake9", "给你：Zh!Ctx7Qw"), where a sentence's name would run on.
_AFTER_COLON = re.compile(r":[ \t]?\Z")
_HANDED_OVER = re.compile(r"[ \t]*(?:\r?\n|\Z)")
_LOWER, _UPPER, _DIGIT = re.compile(r"[a-z]"), re.compile(r"[A-Z]"), re.compile(r"\d")
# Code and addresses mix the same characters: an operator, a URL, a path, a mail address, a
# hashtag, a mention, a variable, a spreadsheet's reference (``Sheet2!$A:$D``); and a mask
# (a breadcrumb already there reads as one).
_NOT_A_PASSWORD = re.compile(r"://|\*\*|[/\\=]|&&|\|\||%[sd]|^[#@$%&*~^!?]|^[a-z0-9._-]+@|@[\w-]+\.[A-Za-z]"
                             r"|!\$[A-Z]{1,3}|![A-Z]{1,3}\$?\d+:")

# What a question asks for when it asks for a credential: its word, in English or another language
# ("¿cuál es la contraseña?"), or what it opens ("what's the router admin one?").
_CREDENTIAL_ASKED = re.compile(
    r"(?i)(?<![a-z])(?:pass(?:word|wd|code|phrase)?|pwd?|pin|cvv2?|cvc2?|wi-?fi|log[ -]?in|creds|credentials?|secret|token|key|code"
    r"|admin|router|vpn|" + "|".join(re.escape(word) for word in PASSWORD_ABROAD) + r")s?(?![a-z])"
)
_ASKING_WORDS = (r"(?i:(?<![a-z])(?:what(?:'s|s)?|which|send|give|need|tell|quel|quelle|cu[áa]l|qué|wie|welche[rs]?|qual|quale"
                 r"|wat|hoe)(?![a-z]))")
_ASKING = re.compile(r"\?|" + _ASKING_WORDS)
_ASKING_WORD = re.compile(_ASKING_WORDS)
_SHORT_QUESTION_WORDS = 6
# A question a reply answers is one said in words, on its last line: a line of code or a URL
# holding "?" beside "token" asks nothing.
_LONGEST_QUESTION = 200
_CODE_OR_LINK = re.compile(r"[=(){}\[\];<>`]|://")
# Words before a credential's name that make it a particular one, and how far back they count.
_PARTICULAR = frozenset("the your my our his her their its this that which das der die dein deine mein meine unser "
                        "le la les ton ta mon ma notre votre el tu mi su lo il tuo tua mio mia het de je jouw mijn".split())
_NAMED_WORDS, _NAMED_REACH = 4, 40
_CARD_CODE_ASKED = re.compile(r"(?i)(?<![a-z])(?:security[ \t]+code|cvv2?|cvc2?|card[ \t]+code|code[ \t]+on[ \t]+the[ \t]+back)(?![a-z])")
# What a one-word reply may be the password of: a question naming a password or a key, not a
# network or an account (whose name is asked as often).
# The word ends the question, or its clause ("the password for the NAS?"): "the password policy?"
# asks about something else.
_PASSWORD_ASKED = re.compile(
    r"(?i)(?<![a-z])(?:pass(?:word|wd|code|phrase)?|pwd?|secret|token|"
    + "|".join(re.escape(word) for word in PASSWORD_ABROAD) + r")s?(?![a-z])"
    r"(?=[ \t]*(?:[?,.!:;]|\Z)|[ \t]+(?:for|to|of|on|at|in|again|now|please|pls|then|you|we|they|he|she|du|de|des|del|della|von|vom|für|fürs|zum|zur|para|pour)(?![a-z]))"
)
_SPACED_DIGITS = re.compile(r"\d{1,4}(?:[ -]\d{1,4}){1,7}")
_DIGITS_ASKED = re.compile(r"(?i)(?<![a-z])(?:pin|pass)?code|(?<![a-z])(?:pin|cvv2?|cvc2?)(?![a-z])")
# The lines after a question that its answer may take: a blank line, a greeting and a speaker's
# header ("Lena Fischer 9:15 AM") may come first.
_ANSWER_LINES = 4
_SPEAKER = re.compile(r"[ \t]*(?:[<>][<> \t]*)?(?:\[[^\]\n]{1,20}\][ \t]*)?(?:[\w .'-]{1,30}:[ \t]+)?")
_MOST_WORDS = 8
_ANSWERED_PAIR = re.compile(r"[^\s/]{1,64}[ \t]*/[ \t]*(?P<secret>[^\s/]{6,100})[ \t]*\Z")
_TIME_OR_DATE = re.compile(r"^\d{1,4}[:./-]\d{1,2}(?:[:./-]\d{1,4})?$")

# Letters and digits written for the letters of "password": leetspeak, and the Cyrillic and Greek
# letters that look like Latin ones.
_LOOKALIKES = str.maketrans({"4": "a", "@": "a", "0": "o", "3": "e", "1": "i", "5": "s", "$": "s", "7": "t",
                             "а": "a", "о": "o", "р": "p", "с": "c", "е": "e", "ѕ": "s", "ԁ": "d", "ο": "o",
                             "α": "a", "ρ": "p", "_": None, "-": None, ".": None, " ": None, "\t": None})
_MISSPELT_LABEL = re.compile(
    # The first letter leads the pattern, so the scan skips ahead to one; every such spelling keeps
    # an s-like letter near its start and the w, so most words that start with p are ruled out at once.
    r"(?P<label>[PpРрΡρ](?<![\w@$][PpРрΡρ])(?:(?=[\w@$-]{0,3}[sS5$ѕ])(?=[\w@$-]{1,7}[wW])[\w@$-]{4,10}"
    r"|(?:[ \t.][A-Za-z0-9@$]){5,10}|(?i:ass)[ \t]+(?i:word)))(?![\w@$])"
    r"(?:(?P<sep>[ \t]*(?:[:=]|->|=>)[ \t]*)"
    r"|[ \t]+(?:(?:for|to|of|on)(?:[ \t]+[\w.-]{1,30}){1,3}?[ \t]+)?(?P<prose>(?i:is|was))[ \t]+"
    r"|(?P<space>[ \t]+))"
    r"(?P<quote>[\"'`]?)(?P<value>[^\s\"'`]{3,100})"
)
_WORD = "password"
# "Lm9 Qx2 Tz7 Kp4 (no spaces)": groups spaced for reading, to be typed as one.
_NO_SPACES = re.compile(r"[ \t]*\((?i:no|without|remove(?:[ \t]+the)?)[ \t]+spaces?\)")
_GROUP = re.compile(r"[!-~]{2,12}\Z")
_WORDS = re.compile(r"\S+")
_MOST_GROUPS = 16
_GROUPS_REACH = _MOST_GROUPS * 13


def rule_shaped(text: str) -> Iterator[Hit]:
    """A value mixing lower and upper case and two digits or more (one after a user and a slash)
    with a symbol a password rule asks for inside it reads as a password wherever it stands."""
    done = 0
    # Such a symbol between two characters of a run is rare in prose (a sentence's "!" and "?" end
    # a word): the runs around one are the only ones read.
    for symbol in _INNER_SYMBOL.finditer(text):
        if symbol.start() < done or symbol.start() == 0 or not _RUN_CHARACTERS.match(text, symbol.start() - 1):
            continue
        start = symbol.start()
        # A run is ASCII: it starts after a character of another script as after a space ("给你：Zh!…").
        while start > 0 and symbol.start() - start <= _SHAPE_LONGEST and text[start - 1] not in _RUN_ENDS \
                and text[start - 1] < "\x7f":
            start -= 1
        run = _RUN.match(text, start)
        if run is None:
            continue
        done = run.end()
        # A colon before it is its label's (``口令:Tz9!…`` once the full-width colon is folded).
        value = run.group(0).rstrip(".:")
        start = run.start() + len(value) - len(value := value.lstrip(":"))
        inside = value[1:-1]
        if len(value) > _SHAPE_LONGEST or not any(symbol in inside for symbol in _RULE_SYMBOLS):
            continue
        # Two digits at least: names joined by a symbol carry one at most (``Tom&Jerry2``, ``Meet@Noon2day``);
        # one is enough after a user and a slash ("admin / Lantern#Bay7"), where a password goes.
        digits = len(_DIGIT.findall(value))
        if not (_LOWER.search(value) and _UPPER.search(value) and digits) or (
                digits < 2 and not _USER_AND_SLASH.search(text, max(0, start - _USER_REACH), start)
                and not (_AFTER_COLON.search(text, max(0, start - 2), start) and _HANDED_OVER.match(text, start + len(value)))):
            continue
        if _NOT_A_PASSWORD.search(value) or placeholder(value):
            continue
        yield Hit(start, start + len(value), PASSWORD)


def asks_for_credential(line: str) -> bool:
    """Whether ``line`` asks for a password, a PIN, a code or a key ("What's the alarm code?")."""
    return _CREDENTIAL_ASKED.search(line) is not None and _ASKING.search(line) is not None


def asks_another_for_credential(line: str) -> bool:
    """``asks_for_credential``, said to someone who is to give one that is known: a credential
    named as a particular one ("the alarm code", "your PIN", "which passcode") or alone ("PIN?"),
    with a word that asks ("what", "send", "tell") or in a few words. "What is a private key?" and
    "I forgot my password, how do I reset it?" ask for none."""
    if _ASKING_WORD.search(line) is None and not (
            line.rstrip().endswith("?") and len(line.split()) <= _SHORT_QUESTION_WORDS):
        return False
    for word in _CREDENTIAL_ASKED.finditer(line):
        before = line[max(0, word.start() - _NAMED_REACH):word.start()].split()[-_NAMED_WORDS:]
        if not before or any(named.lower().strip(",.:;!?") in _PARTICULAR for named in before):
            return True
    return False


def answers_to(reply: str, asked: str) -> Iterator[Hit]:
    """``answers`` in a message said as the reply to ``asked``, read after the question ``asked``
    ends with; only this rule reads the two together, so no label of the question reaches into the
    reply. Only digits that are the whole reply count: a made-looking word given after a question
    is as often a version, a hash or a name (one holding a symbol is found alone), and a setting's
    number ("max_tokens: 1024") is no answer."""
    said = reply.strip().rstrip(".")
    spaced = _SPACED_DIGITS.fullmatch(said) is not None
    worded = not spaced and not said.isdigit() and 6 <= len(said) <= 64 and not any(c.isspace() for c in said)
    if not (said.isdigit() or spaced or worded):
        return
    question = asked.rstrip()[-_LONGEST_QUESTION - 1:].rsplit("\n", 1)[-1]
    if not question.strip() or len(question) > _LONGEST_QUESTION or _CODE_OR_LINK.search(question) \
            or not asks_another_for_credential(question):
        return
    at = reply.index(said)
    if spaced:
        # Digits read out a few at a time ("4 7 1 9") after a question asking for a PIN or a code.
        if any(not names_no_secret_code(question, word.start()) for word in _DIGITS_ASKED.finditer(question)) \
                and 4 <= len(said.replace(" ", "").replace("-", "")) <= 8:
            yield Hit(at, at + len(said), PASSWORD)
        return
    if worded:
        # One word alone in reply to a question asking for a password ("What's the wifi password?",
        # then "Pretzel1984"), when it holds a digit or a symbol as a chosen password does.
        if _PASSWORD_ASKED.search(question) and (classes(said) >= 3 or (classes(said) == 2 and _DIGIT.search(said))) \
                and generated(said, 6) and not prose(said) and not placeholder(said) and not _TIME_OR_DATE.match(said) \
                and not _NOT_A_PASSWORD.search(said.rstrip("!?")):
            yield Hit(at, at + len(said), PASSWORD)
        return
    offset = len(question) + 1
    for hit in answers(question + "\n" + reply):
        if hit.start >= offset:
            yield Hit(hit.start - offset, hit.end - offset, hit.kind, hit.replacement)


def answers(text: str) -> Iterator[Hit]:
    """The lines after one that asks for a credential: a value there that looks made and mixes
    three kinds of character, or digits when a PIN or a code was asked for."""
    if "\n" not in text:
        return
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    answered_up_to = 0
    for index, line in enumerate(lines):
        if index < answered_up_to or not asks_for_credential(line):
            continue
        digits_asked = any(not names_no_secret_code(line, asked.start()) for asked in _DIGITS_ASKED.finditer(line))
        # A card's code is three digits or four ("And the security code on the back?").
        fewest = 3 if digits_asked and _CARD_CODE_ASKED.search(line) else 4
        for offset in range(index + 1, min(len(lines), index + 1 + _ANSWER_LINES)):
            if "?" in lines[offset]:
                continue  # a question back is no answer
            hits = list(_answered(lines[offset], starts[offset], digits_asked, fewest))
            if hits:
                yield from hits
                answered_up_to = offset + 1
                break


def _answered(line: str, start: int, digits_asked: bool, fewest: int = 4) -> Iterator[Hit]:
    speaker = _SPEAKER.match(line)
    said = line[speaker.end():] if speaker else line
    at = start + len(line) - len(said)
    words = said.split()
    # An SSH public key's line (``ssh-ed25519 AAAA… alice@laptop``) is public, whatever was asked.
    if not words or len(words) > _MOST_WORDS or PUBLIC_KEY_TYPE.match(words[0]):
        return
    if digits_asked and len(words) == 1 and words[0].rstrip(".").isdigit() and fewest <= len(words[0].rstrip(".")) <= 8:
        yield Hit(at + said.index(words[0]), at + said.index(words[0]) + len(words[0].rstrip(".")), PASSWORD)
        return
    if (pair := _ANSWERED_PAIR.match(said)) is not None and generated(pair.group("secret"), 6):
        # "CasaLuna / limonata-fresca-88": a name and its password, as a login pair gives them.
        yield Hit(at + pair.start("secret"), at + pair.end("secret"), PASSWORD)
        return
    position = 0
    for word in words:
        position = said.index(word, position)
        value = word.rstrip(".,;:)")
        # Three kinds of character: two (``Python3.11``, ``DOC-2024-12``) name things as often.
        if len(value) >= 6 and classes(value) >= 3 and generated(value, 6) and not prose(value) and not placeholder(value) \
                and not _TIME_OR_DATE.match(value) and not _NOT_A_PASSWORD.search(value.rstrip("!?")):
            yield Hit(at + position, at + position + len(value), PASSWORD)
        position += len(word)


def spaced_groups(text: str) -> Iterator[Hit]:
    if "spaces" not in text.lower():
        return
    for remark in _NO_SPACES.finditer(text):
        line_start = max(text.rfind("\n", 0, remark.start()) + 1, remark.start() - _GROUPS_REACH)
        words = list(_WORDS.finditer(text, line_start, remark.start()))[-_MOST_GROUPS:]
        first = len(words)
        # A group holds a digit or mixes cases; the words before them ("the key is") do not.
        while first > 0 and _GROUP.match(word := words[first - 1].group(0)) \
                and (_DIGIT.search(word) or (_LOWER.search(word) and _UPPER.search(word, 1))):
            first -= 1
        groups = words[first:]
        if len(groups) >= 2 and generated("".join(group.group(0) for group in groups), 8):
            yield Hit(groups[0].start(), groups[-1].end(), PASSWORD)


def _one_edit_from(word: str, target: str) -> bool:
    """``word`` is ``target`` with one letter left out, added, changed or two swapped."""
    if abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        wrong = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        return len(wrong) == 1 or (len(wrong) == 2 and wrong[1] == wrong[0] + 1
                                   and word[wrong[0]] == target[wrong[1]] and word[wrong[1]] == target[wrong[0]])
    shorter, longer = (word, target) if len(word) < len(target) else (target, word)
    first = next((i for i, (a, b) in enumerate(zip(shorter, longer, strict=False)) if a != b), len(shorter))
    return shorter[first:] == longer[first + 1:]


def misspelt_labels(text: str) -> Iterator[Hit]:
    for match in _MISSPELT_LABEL.finditer(text):
        label = match.group("label")
        folded = label.lower().translate(_LOOKALIKES)
        if folded.endswith("s"):
            folded = folded[:-1]
        if label.lower() in (_WORD, _WORD + "s") or not (folded == _WORD or _one_edit_from(folded, _WORD)):
            continue
        value = match.group("value")
        if not match.group("quote"):
            value = value.rstrip(".,;:)")
        if value_is_secret(PASSWORD, value, spaced=match.group("space") is not None,
                           sentence=match.group("prose") is not None):
            yield Hit(match.start("value"), match.start("value") + len(value), PASSWORD)

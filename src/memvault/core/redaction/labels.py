"""Secrets that a label reveals: a credential word ending a key's name (``password``, ``DB_PASS``,
``dbPassword``, ``x-api-key``, ``client_secret``, ``AccountKey``, ``MYSQL_PWD``, ``sig``) followed by
its value in any of the forms a configuration or a sentence gives it: ``key=value``, ``key: value``,
``"key": "value"``, TOML and INI, ``<key>value</key>``, ``<add key="…Password" value="…"/>``,
``key value``, and prose ("the password for the NAS is …"). The label stays, the value goes.

Labels differ in how sure they are: a password, secret or token label takes any value that is not
a placeholder, code or prose; a ``key``, ``auth`` or ``signature`` label (also a cache key, an
author, a signature line) takes only values that look generated; and a value given after a bare
space (``password reset``) must look generated whatever the label."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from functools import lru_cache

from memvault.core.redaction.languages import (
    IS_ABROAD,
    IS_ABROAD_AND_ENGLISH,
    IS_UNSPACED,
    KEY_ABROAD,
    PASSWORD_ABROAD,
    PASSWORD_OR_CODE_ABROAD,
    PIN_ABROAD,
    SECRET_CODE_WORDS_ABROAD,
    TOKEN_ABROAD,
)
from memvault.core.redaction.numbers import CARD_CODE
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import classes, code, generated, placeholder, prose

PASSWORD = "password"
TOKEN = "token"
API_KEY = "api_key"
PRIVATE_KEY = "private_key"
STRONG, WEAK = "strong", "weak"

_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "pw", "pswd", "pass", "psk", "pin"})
# A PIN and a card's security code are digits (how many each): "pin" labels wiring and versions
# as often as a bank card's code.
# Words that name a password and much else ("the pass is complete"): in a sentence, not a plain word.
_AMBIGUOUS_WORDS = frozenset({"pass", "pw"})
_DIGITS_ONLY_WORDS = {"pin": (4, 12), "cvv": (3, 4), "cvc": (3, 4), "cvv2": (3, 4), "cvc2": (3, 4), "puk": (4, 10),
                      "otp": (4, 8), "geheimzahl": (4, 12), "geheimnummer": (4, 12), "pincode": (4, 12)}
_STRONG_WORDS = _PASSWORD_WORDS | {"secret", "token", "credential", "credentials", "creds", "apikey", "cvv", "cvc", "cvv2",
                                   "cvc2", "puk", "otp"}
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")
_WEAK_WORDS = frozenset({"auth", "sig", "signature", "pat"})
# A wireless network's key is its password ("wifi key", "WPA key", Windows' "network key").
_NETWORK_WORDS = frozenset({"wifi", "fi", "wlan", "wpa", "wpa2", "network"})
# "Code" names a credential's digits only beside a word that says so ("unlock code", "access
# code", a card's "security code"); an error, a zip or a country code is not one, and a door's,
# gate's or locker's code is the household knowledge a memory is asked to keep.
# A device's own code unlocks it ("the iPad code", "my laptop code"); a phone's could be its country's.
_SECRET_CODE_WORDS = frozenset({"pin", "pass", "unlock", "disarm", "security", "access", "alarm", "safe", "puk", "verification",
                                "login", "otp", "mfa", "sms", "confirmation", "authentication", "auth", "ipad", "iphone",
                                "tablet", "laptop", "screen", "lockscreen"})
# After "code", what it opens ("the code to get into my phone"): a device's is its unlock code.
_DEVICES = frozenset({"phone", "iphone", "ipad", "tablet", "laptop", "computer", "pc", "mac", "macbook", "screen"})
# A code that signs someone in once is a one-time code, not a password to keep.
_ONE_TIME_CODE_WORDS = frozenset({"verification", "login", "otp", "mfa", "sms", "confirmation", "authentication", "auth"})
ONE_TIME_CODE = "one_time_code"
# Names in one case run words together (``SSHPASS``, ``newpass``): one ending in "pass" is a
# password's unless it is an English word ending so.
_PASS_WORDS_NOT_PASSWORDS = ("bypass", "compass", "surpass", "trespass", "overpass", "underpass", "encompass")
# A key named for something that is not a credential: its value is an identifier or is public.
_NOT_CREDENTIAL_KEYS = frozenset(
    "public pub foreign sort partition cache idempotency dedup dedupe routing lookup object row hash index unique "
    "composite map dict translation group message event hot short natural surrogate tracking ssh gpg "
    "kms publishable".split()
)
# Words after a credential's name that say the value is the credential in another form.
_ENCODINGS = r"[_-](?i:base64|base|b64|hex|value|raw|bytes|material|plain|plaintext|clear|cleartext)(?![A-Za-z0-9])"
_ENCODED = re.compile(_ENCODINGS + r"\Z")
_STRONG_KEYS = frozenset(
    "private secret api access account shared preshared master signing encryption decryption client app auth sas "
    "storage subscription webhook hmac jwt license licence consumer admin root service session".split()
)


def _by_first_letter(fragments: list[str]) -> str:
    """One alternation of ``fragments`` (each starting with a letter), grouped by that letter: a
    scan then tries a group per character instead of every word."""
    groups: dict[str, list[str]] = {}
    for fragment in fragments:
        groups.setdefault(fragment[0], []).append(fragment[1:])
    # A phrase before the word it starts with: "clave wifi" rather than "clave" and a value "wifi".
    return "|".join(first + "(?:" + "|".join(sorted(rests, key=lambda rest: "[" not in rest)) + ")"
                    for first, rests in groups.items())


# Of words that start alike, the longer first: "code wifi" is a label where "code" alone is not.
_ABROAD_WORDS = [word.replace(" ", "[ \t]") for word in PASSWORD_ABROAD + TOKEN_ABROAD]
_ASCII_WORDS = (r"pass(?:word|wd|phrase|code)? pwd pw pswd psk pin cvv cvc secret token key credentials? creds auth sig "
                r"signature pat cvv2 cvc2 puk otp".split() + [word for word in _ABROAD_WORDS if word.isascii()] + ["code"])
_WORDS = _by_first_letter(_ASCII_WORDS[:-1] + [word for word in _ABROAD_WORDS if not word.isascii()] + ["code"])
LABEL_WORDS = _WORDS
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# A bare value ends where a sentence's punctuation does, the ideographic too.
_BARE = r"(?:[^\s\"'`<>;&,\\|、。「-』【】]|&(?![\w.-]{1,40}=)|,(?=[!-~]))"
# A value may be quoted, or set in Markdown's backticks; a quoted one may hold escapes (``\\``,
# ``\n``) other than of its own quote, which in escaped JSON (``\"password\":\"…\"``) closes it.
_VALUE = (r"(?:(?:\([ \t]*)?\\?\"(?P<dq>(?:[^\"\\\n]|\\[^\"\n]){1,300})\\?\"|\\?'(?P<sq>(?:[^'\\\n]|\\[^'\n]){1,300})\\?'"
          r"|`(?P<bq>[^`\n]{1,300})`"
          r"|(?P<bare>[^\s\"'`<>;&,\\|\[]" + _BARE + r"{0,511}))")
# Beside ``=`` and ``:``: a typed declaration's annotation (``password: String =``, Rust's
# ``&'static str``), a quoted name passed with its value (``define('DB_PASSWORD', '…')``) and a
# percent-escaped ``=`` (a query string inside another URL's parameter).
_SEP = (r"(?P<sep>[ \t]*(?::=|=>|->|=|:[ \t]*&?(?:'\w+[ \t]+)?[A-Za-z_][\w.<>?\[\]]{0,40}[ \t]+=(?!=)"
        r"|(?<=[\"'])[ \t]*,(?=[ \t]*[\"'])|%3[Dd]|:(?!//)|\.{3})[ \t]*)")
# "is", how a sentence says a password was changed ("is now", "got changed to", "was reset to"), and
# how a log tells one given ("given as", "entered as").
_IS = (r"(?:(?:(?:is|was|has[ \t]+been|have[ \t]+been|got|just)[ \t]+)?(?:changed|set|updated|reset)[ \t]+to"
       r"|(?:is|was|are|IS|WAS|ARE)(?:[ \t]+(?:now|still|currently|actually|also))?|(?:given|entered|typed|sent)[ \t]+as|=)")
_PROSE = (r"(?:[ \t]+(?P<prose>" + _IS + r"):?[ \t]+|[ \t]+(?P<abroad>" + IS_ABROAD + r"):?[ \t]+"
          r"|[ \t]*(?P<cjk>" + IS_UNSPACED + r")[ \t]*(?=[!-~]))")
# Words of a language without a list of its own between the label and the value ("كلمة السر
# الخاصة بي هي …", "kata sandi saya adalah …"): only before a value shaped like a password, and
# only after a label in another language (checked where the match is read).
# A colon that ends a word is the label's own ("kata sandi wifi kantor: …"), not a symbol of the value.
_FLAG = re.compile(r"--?[A-Za-z][\w-]{0,40}")
_GIT_SECTION = re.compile(r"[ \t]*\[credential[ \t]+\"[^\"\n]*\"\][ \t]*(?:\r?\n|\Z)")
_COMPOUND_NOUN = re.compile(r"[A-Z][a-z]*(?:-[A-Z]?[a-z]+)+")
_OWN_WORDS = (r"(?P<own>(?:[ \t]+[^\s\d!-/:-@\[-`{-~]{1,20}){1,3}?)[ \t]*:?[ \t]+"
              r"(?=[A-Za-z]{0,40}(?:[0-9!-/;-@\[-`{-~]|:(?=\S)))")
_ASSIGNMENT = re.compile(
    r"(?P<label>(?:(?<![A-Za-z0-9_%-])|(?<=%3[Ff])|(?<=%26))(?:[A-Za-z][A-Za-z0-9]{0,20} ){0,2}[A-Za-z0-9_.-]{0,40}?(?i:" + _WORDS + r")"
    # An encoding's word after the name only before ``=`` or ``:`` (``SECRET_KEY_BASE=…``).
    r"(?:" + _ENCODINGS + r"(?=\\?[\"']?[ \t]*[:=]))?)"
    r"(?![A-Za-z0-9])(?:\*{1,2}(?=[:=]))?\\?[\"']?"
    r"(?:(?P<qual>[ \t]+(?i:for|to|of|on|at|in|de|du|des|do|da|del|della|für|von|vom|zum|zur|der|van|voor|för|til|till|dla|pour|para|per|di|al|ao|au|ot|от|для|до|від|на|k|ke|za|pro|as"
    # Whose it is ("die PIN meiner EC-Karte ist …").
    r"|my|meiner|meines|meine|mein|mon|mi|mijn|mitt|της|του|των)(?:[ \t]+[\w@.'-]{1,30}){1,6}?"
    # Who keeps or uses it, or since when ("the password I use for everything: …", "the password
    # you gave me was …", "my password everywhere is …"): the sentence names its value next.
    r"|[ \t]+(?i:(?:that|which)[ \t]+)?(?:I|i(?=[ \t]+[a-z])|(?i:we|you|he|she|they))(?:[ \t]+[\w'-]{1,20}){1,6}?"
    r"|[ \t]+(?i:that|which)(?:[ \t]+[\w'-]{1,20}){1,3}?"
    r"|[ \t]+(?i:everywhere|anywhere|now|today|these[ \t]+days|nowadays|currently|lately|again|too|also)"
    # A preposition elided into the next word (Italian's "dell'admin", French's "d'accès").
    r"|[ \t]+(?i:dell|dall|all|nell|sull|d)'[\w@.-]{1,30}(?:[ \t]+[\w@.'-]{1,30}){0,3}?"
    # Which part of a password split over lines this one gives ("password part 1: …").
    r"|[ \t]+(?i:part|half)[ \t]+(?:\d|one|two|three|i{1,3})(?!\w)|[ \t]+(?i:begins|starts|ends)[ \t]+with"
    # The encoding it is given in ("db password hex-encoded: …").
    r"|[ \t]+(?i:in[ \t]+)?(?i:hex|base64|b64|base32|rot-?13|url)(?:[ \t-]?(?i:encoded|escaped|d))?(?![\w-])"
    # Or written backwards, perhaps with a remark why ("pw backwards (so the bot doesn't see it): …").
    r"|[ \t]+(?i:backwards|reversed|in[ \t]+reverse)(?:[ \t]*\([^()\n]{1,60}\))?"
    # A remark in brackets between the label and its separator ("password (case sensitive): …").
    r"|[ \t]*\([^()\n]{1,60}\))(?:" + _SEP + "|" + _PROSE + r")"
    r"|" + _SEP.replace("sep", "sep2") + "|"
    + _PROSE.replace("prose", "prose2").replace("abroad", "abroad2").replace("cjk", "cjk2") + "|" + _OWN_WORDS
    # Cisco's type of a password between its label and it (``password 7 0822…``, ``password 0 …``).
    + r"|(?P<space>[ \t]+(?:[0579][ \t]+(?=[!-~]{8}))?))"
    # Markdown's bold around a label ends after its colon (``**Password:** …``).
    + r"(?:\*{1,2}[ \t]+)?" + _VALUE
)
# Every match of ``_ASSIGNMENT`` holds a credential word, at most ``_LABEL_LEAD`` characters after
# the match begins (two words of a label and a run of 40 before it). Looking for the word alone is
# a far cheaper scan, so the whole pattern only ever starts near one: most text holds none at all.
# Words outside ASCII are looked for only in text that has such characters.
_LABEL_WORD = re.compile(r"(?i:" + _by_first_letter(_ASCII_WORDS) + r")")
_LABEL_WORD_ABROAD = re.compile(r"(?i:" + _by_first_letter([word for word in _ABROAD_WORDS if not word.isascii()]) + r")")
_LABEL_LEAD = 2 * 22 + 40
_LABEL_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_.-% ")
_ELEMENT = re.compile(
    r"<(?P<label>[A-Za-z_][\w.:-]{0,60})(?:[ \t][^<>\n]{0,200})?>(?P<value>[^<>\n]{1,300})</(?P=label)>"
)
# A property list gives a key's value in the element after it (``<key>APIToken</key><string>…</string>``).
# KeePass's XML export gives each field the same way (``<Key>Password</Key><Value …>…</Value>``).
_PLIST_ENTRY = re.compile(r"<(?P<key>[Kk]ey)>(?P<label>[^<>\n]{1,60})</(?P=key)>[ \t\r\n]{0,200}"
                          r"<(?P<element>string|Value)(?:[ \t][^<>\n]{0,100})?>(?P<value>[^<>\n]{1,300})</(?P=element)>")
# An element whose ``name`` attribute labels the text it holds (Hibernate's and Ant's
# ``<property name="hibernate.connection.password">…</property>``).
_NAMED_ELEMENT = re.compile(
    r"<(?P<element>[A-Za-z_][\w.:-]{0,60})[ \t](?:[^<>\n]{0,200}?[ \t])?name[ \t]*=[ \t]*\"(?P<label>[^\"\n]{1,80})\""
    r"[^<>\n]{0,200}>(?P<value>[^<>\n]{1,300})</(?P=element)>"
)
# A row of an HTML table or description list: the label's cell, then the value's
# (``<td>Password</td><td>…</td>``, ``<dt>Token</dt><dd>…</dd>``).
_HTML_ROW = re.compile(
    r"<(?P<open>t[dh]|dt)(?:[ \t][^<>\n]{0,100})?>[ \t]*(?P<label>[^<>\n]{1,60}?)[ \t]*</(?P=open)>[ \t\r\n]{0,40}"
    r"<(?P<cell>td|dd)(?:[ \t][^<>\n]{0,100})?>[ \t]*(?P<value>[^<>\n]{1,300}?)[ \t]*</(?P=cell)>"
)
# A setting stored as a row of a key-value table, its value set where its key is named
# (``UPDATE settings SET value = '…' WHERE key = 'smtp_password'``).
_SQL_SETTING = re.compile(
    r"(?i:value)[ \t]*=[ \t]*'(?P<value>[^'\n]{1,300})'[ \t]+(?i:where)[ \t]+(?i:key|name)[ \t]*=[ \t]*'(?P<label>[^'\n]{1,60})'"
)
_ATTRIBUTES = re.compile(
    r"(?i:key|name)[ \t]*=[ \t]*\"(?P<label>[^\"\n]{1,60})\"[ \t]+(?i:value)[ \t]*=[ \t]*\"(?P<value>[^\"\n]{1,300})\""
)
# What a password holds and the next word of a sentence does not, in a language without a list of
# its prose words: a digit, an ASCII symbol or mixed case, among ASCII only (a CJK sentence goes on
# unspaced).
_PASSWORD_SHAPED = re.compile(r"^(?=[!-~]+$).*[0-9!-/:-@\[-`{-~]")
PUBLIC_KEY_TYPE = re.compile(r"^(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-(?:ssh|ecdsa)-[\w@.-]+)$")
# What is public though a key's label names it: an OpenPGP key's id as GnuPG prints it (``4096R/…``,
# ``rsa4096/0x…``) and a publishable key (Mapbox's ``pk.eyJ…``, Stripe's ``pk_live_…``), made to ship in pages.
PUBLIC_KEY_VALUE = re.compile(r"^(?:\d{3,5}[RDGE]|(?:rsa|dsa|elg)\d{4}|ed25519|cv25519|nistp\d{3})/(?:0x)?[0-9A-Fa-f]{8,40}$"
                               r"|^pk(?:\.eyJ|_(?:live|test)_)")
# A quantity (``Token: 0.0042 ETH``) is a number with a fraction; a token or key never is.
_DECIMAL = re.compile(r"^\d+[.,]\d+$")
_DATE = re.compile(r"^\d{1,4}([-/.])\d{1,2}\1\d{1,4}$")
_DIGIT_GROUPS = re.compile(r"^\d{1,6}(?:-\d{1,6}){1,11}$")
_WORD_PATH = re.compile(r"^(?:~|\.{1,2})?/?[a-z][a-z0-9_.-]*(?:/[a-z][a-z0-9_.-]*)+$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_]\w*)*$|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_PROSE_GOES_ON = re.compile(r"[ \t]+\w")
_EXPRESSION_GOES_ON = re.compile(r"[ \t]+(?:\+|\|\||\?\?)[ \t]")
_APP_PASSWORD_START = re.compile(r"^[a-z]{4}$")
_APP_PASSWORD_REST = re.compile(r"(?:[ \t][a-z]{4}){3}(?![\w])")
_REST_OF_LINE = re.compile(r"(?:[ \t]+\S{1,24}){1,8}(?=[ \t]*\r?\n|[ \t]*\Z)")
_NOT_PRINTABLE_ASCII = re.compile(r"[^!-~]")
_NEXT_KEY = re.compile(r"[\"']?[ \t]*:")
_NEXT_SETTING = re.compile(r"[A-Za-z_][\w.-]{0,60}=")
_SPELLED_OUT = re.compile(r"\S(?:[ \t]\S(?![^\s.,;:)])){5,63}")
# A PIN or a code said a digit or a few at a time ("the PIN is 4 7 1 9", "OTP 841 927").
_SPELLED_DIGITS = re.compile(r"\d{1,4}(?:[ \t]\d{1,4}){1,11}(?![ \t]?\d)")
# The words of ``PASSWORD_ABROAD`` and ``TOKEN_ABROAD`` that are not English ones as well.
_FOREIGN_WORDS = tuple(word for word in PASSWORD_ABROAD + TOKEN_ABROAD
                       if word not in ("pincode", "safe combination", "pin-nummer", "pinnummer", "parole"))
# A value that is a credential's word itself names it ("'password' in Japanese is パスワード").
_CREDENTIAL_WORD_VALUES = frozenset(word.lower() for word in PASSWORD_ABROAD + TOKEN_ABROAD) | _PASSWORD_WORDS
# An ARN's resource type (``arn:aws:secretsmanager:…:secret:prod/db``) names the kind of what the ARN
# points at; the name after it is a path, not the secret.
_ARN_BEFORE = re.compile(r"(?<![\w:])arn:[\w.-]{1,30}:[\w.-]{1,60}:[\w.-]{0,30}:\d{0,12}:\Z")
_ARN_REACH = 140
# A label that a condition leads (``if not password:``) is code testing a variable, and its colon
# opens a block rather than a value.
_CONDITION_WORDS = frozenset({"if", "elif", "while", "not", "unless", "until", "assert"})


@lru_cache(maxsize=1024)
def _words_of(label: str) -> tuple[str, ...]:
    """The words of ``label`` in lower case, less a number that follows the last (``CVV2``, ``PUK2``,
    ``DB_PASSWORD_2``): it numbers the credential rather than naming something else."""
    words = tuple(word.lower() for word in _CAMEL.findall(label))
    if len(words) > 2 and label.isalpha() and label.lower() in _STRONG_WORDS:
        # A credential's word in mixed case to slip past a reader (``PaSsWoRd``) is the word, not camelCase.
        words = (label.lower(),)
    if len(words) > 1 and words[-1].isdigit():
        words = words[:-1]
    return words or ("",)


@lru_cache(maxsize=1024)
def _digits_only(label: str) -> tuple[int, int] | None:
    if label.lower().endswith(PIN_ABROAD):
        return _DIGITS_ONLY_WORDS["pin"]
    words = _words_of(label)
    if words[-1] == "code":
        # A card's security code is three digits or four; every other secret code at least four.
        return (3, 12) if "security" in words else _DIGITS_ONLY_WORDS["pin"]
    return _DIGITS_ONLY_WORDS.get(words[-1])


def _pass_run_together(label: str, last: str) -> bool:
    return (label.isupper() or label.islower()) and last.endswith("pass") and not last.endswith(_PASS_WORDS_NOT_PASSWORDS)


@lru_cache(maxsize=1024)
def label_strength(label: str) -> str | None:
    """How surely a value under ``label`` is a secret: STRONG, WEAK, or None (not a credential's name)."""
    if label.lower().endswith(PASSWORD_ABROAD):
        return STRONG
    if label.lower().endswith(TOKEN_ABROAD):
        return WEAK
    words = _words_of(label)
    if not words[0]:
        return None
    if (encoded := _ENCODED.search(label)) is not None and encoded.start() > 0:
        # The credential in another form (Rails' ``SECRET_KEY_BASE``, ``token_hex``): only a
        # generated value, since the name may as well hold the form's name.
        return WEAK if label_strength(label[:encoded.start()]) is not None else None
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if words[0] == "existing":
        return None  # a chart's ``existingSecret``: the name of a secret stored elsewhere, not its value
    if last in _STRONG_WORDS or last.endswith(_STRONG_ENDINGS) or _pass_run_together(label, last):
        return STRONG
    if last == "code":
        return STRONG if not _SECRET_CODE_WORDS.isdisjoint(words) else None
    if last == "key" and before in _NETWORK_WORDS:
        return STRONG
    if last == "key" or last.endswith(("accesskey", "accountkey", "secretkey", "privatekey")):
        if before in _NOT_CREDENTIAL_KEYS:
            return None
        return STRONG if before in _STRONG_KEYS or last != "key" else WEAK
    return WEAK if last in _WEAK_WORDS else None


@lru_cache(maxsize=1024)
def kind_of(label: str) -> str:
    words = _words_of(label)
    lowered = label.lower()
    if words[-1] in ("cvv", "cvc", "cvv2", "cvc2"):
        return CARD_CODE
    if lowered.endswith(TOKEN_ABROAD):
        return API_KEY if lowered.endswith(KEY_ABROAD) else TOKEN
    if words[-1] == "otp" or (words[-1] == "code" and not _ONE_TIME_CODE_WORDS.isdisjoint(words)):
        return ONE_TIME_CODE
    network_key = words[-1] == "key" and len(words) > 1 and words[-2] in _NETWORK_WORDS
    if lowered.endswith(PASSWORD_ABROAD) or words[-1] in _PASSWORD_WORDS or words[-1] == "code" or network_key \
            or words[-1].endswith(("password", "passwd", "passphrase")) or _pass_run_together(label, words[-1]):
        return PASSWORD
    if words[-1].endswith("key"):
        return PRIVATE_KEY if "private" in words or words[-1] == "privatekey" else API_KEY
    return TOKEN


def value_is_secret(label: str, value: str, spaced: bool = False, sentence: bool = False, abroad: bool = False) -> bool:
    """Whether ``value``, given under ``label``, is a secret. ``spaced``: it followed the label
    after a bare space; ``sentence``: after "is", or with more words of a sentence after it;
    ``abroad``: after "is" in another language, where no list of prose words tells the next word
    of the sentence from a password, so only a value holding a digit, a symbol or mixed case is one."""
    strength = label_strength(label)
    if strength is None:
        return False
    # What the checks below would refuse whatever else holds, refused first: a page of words
    # after labels costs little.
    if (abroad and not value.isascii() and not value.isdigit()) or (spaced and len(value) < 6 and _digits_only(label) is None):
        return False
    # Digits are never a placeholder or code; skipping those checks keeps a page of them cheap.
    if (not value.isdigit() and (placeholder(value) or code(value) or _named_after(label, value))):
        return False
    if value.lower() in _CREDENTIAL_WORD_VALUES:
        return False
    if kind_of(label) != PASSWORD and _WORD_PATH.match(value):
        return False  # a profile or a path (``aws/prod-readonly``) names where a token is kept
    if PUBLIC_KEY_TYPE.match(value):
        return False  # an SSH public key's type, its body after it: "my key: ssh-ed25519 AAAA…"
    if PUBLIC_KEY_VALUE.match(value) or (kind_of(label) != PASSWORD and _DECIMAL.match(value)):
        return False
    if value.isdigit() and label.lower().endswith(PASSWORD_OR_CODE_ABROAD):
        return False
    if (sizes := _digits_only(label)) is not None:
        # Grouped for reading as a code is printed or said ("7731-0924").
        digits = value.replace("-", "") if _DIGIT_GROUPS.match(value) else value
        return digits.isdigit() and sizes[0] <= len(digits) <= sizes[1]
    if abroad and (_DATE.match(value) or not (value.isascii() and (
            _PASSWORD_SHAPED.search(value.rstrip("?!")) or classes(value.rstrip("?!")) >= 2))):
        return False
    if spaced and value.isdigit():
        # Digits after a password's name and a space are its value when there are as many as a
        # PIN's longest or a numeric password's ("支付密码 660913"); fewer may count something.
        return strength == STRONG and kind_of(label) == PASSWORD and _words_of(label)[-1] not in _AMBIGUOUS_WORDS \
            and 6 <= len(value) <= 12
    if spaced:
        # A password may be short ("passcode 7hXq2P") when it mixes three kinds of character.
        least = 6 if kind_of(label) == PASSWORD and _words_of(label)[-1] not in _AMBIGUOUS_WORDS and classes(value) >= 3 \
            else 8
        return generated(value, least) and (strength == STRONG or len(value) >= 16)
    if strength == WEAK:
        return generated(value)
    if sentence and (prose(value) or (kind_of(label) != PASSWORD and value.isalpha())
                     or (_words_of(label)[-1] in _AMBIGUOUS_WORDS and value.isalpha() and value.islower())):
        # People pick words as passwords; tokens and secrets are made by machines, so a word after
        # "the secret to bread is" is the rest of the sentence.
        return False
    password = kind_of(label) == PASSWORD
    if value.isdigit():
        return password and len(value) >= 4
    return len(value) >= (3 if password else 6)


def _trimmed(value: str) -> str:
    """A bare value less the punctuation of the sentence around it (a closing bracket stays when
    the value opened it)."""
    while value and value[-1] in ".,;:'\")]}":
        closing = value[-1]
        opener = {")": "(", "]": "[", "}": "{"}.get(closing)
        if opener is not None and value.count(opener) >= value.count(closing):
            break
        value = value[:-1]
    return value


def _value(match: re.Match[str]) -> tuple[str, int, int]:
    group = next(name for name in ("dq", "sq", "bq", "bare") if match.group(name) is not None)
    value, start = match.group(group), match.start(group)
    if group == "bare" and not value.endswith(("...", "\u2026")):
        value = _trimmed(value)
    return value, start, start + len(value)


def _next_label_word(text: str, position: int, found: list[int]) -> int:
    """Where the next credential word at or after ``position`` starts (-1: none). ``found`` holds
    the next one of each scan found so far (ASCII words, then others when the text has any; -1:
    none left, -2: not looked for yet), so that each stretch of the text is scanned once."""
    for index, pattern in enumerate((_LABEL_WORD, _LABEL_WORD_ABROAD)[:len(found)]):
        if -1 < found[index] < position or found[index] == -2:
            word = pattern.search(text, position)
            found[index] = word.start() if word is not None else -1
    starts = [start for start in found if start != -1]
    return min(starts) if starts else -1


def assignments(text: str) -> Iterator[Hit]:
    position = 0
    found = [-2] if text.isascii() else [-2, -2]
    while (word_start := _next_label_word(text, position, found)) != -1:
        # A label starts at most ``_LABEL_LEAD`` before its word, and only its own characters lie
        # between: the search starts where they begin rather than trying every place before.
        lead, floor = word_start, max(position, word_start - _LABEL_LEAD)
        while lead > floor and text[lead - 1] in _LABEL_CHARACTERS:
            lead -= 1
        match = _ASSIGNMENT.search(text, lead)
        if match is None:
            return
        position = match.end("label")
        label = match.group("label")
        if _condition(label, match) or _variable(text, match) or _english_goes_on(label, match) \
                or _ARN_BEFORE.search(text, max(0, match.start("label") - _ARN_REACH), match.start("label")):
            continue
        # Words of the sentence between a label and its value only in a language without a list of its own.
        if match.group("own") is not None and not label.lower().endswith(PASSWORD_ABROAD + TOKEN_ABROAD):
            continue
        # There, a compound noun is the sentence going on ("… vergessen und die E-Mail zum …").
        if match.group("own") is not None and _COMPOUND_NOUN.fullmatch(_value(match)[0]):
            continue
        label = _qualified(label, match.group("qual"))
        value, start, end = _value(match)
        if match.group("cjk") is not None or match.group("cjk2") is not None:
            # Unspaced, the sentence goes on in its own script right after the value ("…です").
            value = _NOT_PRINTABLE_ASCII.split(value, maxsplit=1)[0]
            end = start + len(value)
        if match.group("space") is not None and (_NEXT_SETTING.match(value) or text[match.start("label") - 1:match.start("label")] == "="):
            # ``method=password ip=10.0.0.8``: the word is a value itself, and what follows is the next setting.
            continue
        if match.group("space") is not None and _app_password(label, value) and (
                rest := _APP_PASSWORD_REST.match(text, end)) is not None:
            yield Hit(start, rest.end(), PASSWORD)
            position = max(position, rest.end())
            continue
        if len(value) <= 4 and value.isdigit() and (_digits_only(label) is not None or kind_of(label) == PASSWORD) \
                and (spelled := _SPELLED_DIGITS.match(text, start)) is not None:
            if value_is_secret(label, spelled.group(0).replace(" ", "").replace("\t", "")):
                yield Hit(start, spelled.end(), kind_of(label))
                position = max(position, spelled.end())
            continue
        if kind_of(label) == PASSWORD and len(value) == 1 and (spelled := _SPELLED_OUT.match(text, start)):
            # Spelled out a character at a time ("K 9 x # m 2 L q"): read as one.
            if generated(joined := spelled.group(0).replace(" ", "").replace("\t", "")) and value_is_secret(label, joined):
                yield Hit(start, spelled.end(), PASSWORD)
                position = max(position, spelled.end())
            continue
        if _FLAG.fullmatch(value) or _GIT_SECTION.match(text, text.rfind("\n", 0, match.start("label")) + 1):
            # A command line's next option (``"get-token", "--cluster-name"``), and git's section
            # of a credential helper for a host (``[credential "https://github.com"]``).
            continue
        separator = (match.group("sep") or match.group("sep2") or "").strip()
        if separator.lower() == "%3d":
            value = value.split("%26")[0]
            end = start + len(value)
        bare = match.group("bare") is not None
        # A name passed beside its value (``define('DB_PASSWORD', …)``) is as likely a label
        # beside its translation: only a value shaped like a password counts.
        passed = separator == ","
        # A quoted word followed by a colon is the next key of a mapping (``"name": "DB_PASSWORD",
        # "valueFrom": …``), not a value passed beside its name.
        if passed and (any(c.isspace() for c in value) or _NEXT_KEY.match(text, end)):
            continue
        # English's "is" after another language's word is that language's too (Dutch "Het
        # wachtwoord is verlopen"), whose sentence no English list of words tells from a value.
        # After an ellipsis the sentence may go on in words ("password... forgot it again").
        abroad = passed or separator == "..." or match.group("abroad", "abroad2", "cjk", "cjk2", "own") != (None,) * 5 or (
            match.group("prose", "prose2") != (None, None) and label.lower().endswith(_FOREIGN_WORDS))
        # A word the sentence goes on after (a capitalised one too, under a token's label: a
        # machine's secret is never a plain word) is prose; so is a value an expression goes on from.
        worded = value.islower() or prose(value) or (value.istitle() and kind_of(label) != PASSWORD)
        sentence = abroad or match.group("prose") is not None or match.group("prose2") is not None or (
            bare and value.isalpha() and worded and bool(_PROSE_GOES_ON.match(text, end)))
        if bare and _EXPRESSION_GOES_ON.match(text, end):
            continue
        if value and value_is_secret(label, value, spaced=match.group("space") is not None, sentence=sentence,
                                     abroad=abroad):
            yield Hit(start, _spaced_end(text, label, value, end) if bare else end, kind_of(label))
            position = max(position, end)


def _spaced_end(text: str, label: str, value: str, end: int) -> int:
    """Where a password written unquoted with spaces ends: a passphrase's words run to the end of
    its line, and an app password (``abcd efgh ijkl mnop``) is four groups of four letters."""
    if kind_of(label) != PASSWORD:
        return end
    rest = _APP_PASSWORD_REST.match(text, end) if _APP_PASSWORD_START.match(value) else None
    if rest is None and _words_of(label)[-1] == "passphrase":
        rest = _REST_OF_LINE.match(text, end)
    return end if rest is None else rest.end()


def _app_password(label: str, value: str) -> bool:
    """The first group of an app password (``abcd efgh ijkl mnop``) after its label ("gmail app
    password", "app specific password"): too short to pass for a password alone."""
    words = _words_of(label)
    return kind_of(label) == PASSWORD and ("app" in words or "specific" in words) and bool(_APP_PASSWORD_START.match(value))


def _qualified(label: str, qualifier: str | None) -> str:
    """A code's label with the word that makes it a secret's, when the qualifier after it holds
    one ("the code to unlock the phone is …", "le code d'accès est …")."""
    if qualifier is None or _words_of(label)[-1] != "code":
        return label
    words = re.split(r"[\s']+", qualifier.lower())
    found = _SECRET_CODE_WORDS.intersection(SECRET_CODE_WORDS_ABROAD.get(word, word) for word in words)
    if not found and not _DEVICES.isdisjoint(words):
        found = frozenset({"unlock"})  # the code to get into my phone unlocks it
    return f"{min(found)} {label}" if found else label


def _named_after(label: str, value: str) -> bool:
    """Code passing a variable or naming a type after what it holds (``credentials=credentials``,
    ``credential: Credential``, ``password: OAuthFlowPassword | None``, ``credential: CredentialParam``)."""
    words = _CAMEL.findall(label)
    if not words or _IDENTIFIER.match(value) is None:
        return False
    name, word = value.replace("_", "").lower(), words[-1].lower()
    return name.endswith(word) or (value[0].isupper() and name.startswith(word))


def _variable(text: str, match: re.Match[str]) -> bool:
    """A label that a shell or template reads (``$API_KEY``, ``${TOKEN}``, ``%PASSWORD%``) is a
    reference, and what follows it is the rest of the command; unless a literal is assigned to it
    (PHP's and Perl's ``$db_pass = '…';``)."""
    start = match.start("label")
    if not (start > 0 and (text[start - 1] in "$%" or text[max(0, start - 2):start] == "${")):
        return False
    assigned = text[start - 1] == "$" and (match.group("sep") or match.group("sep2") or "").strip() == "=" \
        and (match.group("dq") is not None or match.group("sq") is not None)
    return not assigned


def _english_goes_on(label: str, match: re.Match[str]) -> bool:
    """Another language's "is" that English spells as a word of its own, after an English label."""
    abroad = match.group("abroad") or match.group("abroad2")
    return abroad is not None and abroad.lower() in IS_ABROAD_AND_ENGLISH and label.isascii() \
        and not label.lower().endswith(PASSWORD_ABROAD + TOKEN_ABROAD)


def _condition(label: str, match: re.Match[str]) -> bool:
    separator = match.group("sep") or match.group("sep2") or ""
    return separator.strip() == ":" and not _CONDITION_WORDS.isdisjoint(label.lower().split()[:-1])


def elements(text: str) -> Iterator[Hit]:
    """``<password>…</password>``, ``<add key="SmtpPassword" value="…"/>``, a property list's
    ``<key>APIToken</key>`` with the ``<string>`` after it, an HTML table's row and a key-value
    table's SQL."""
    patterns = (_ELEMENT, _ATTRIBUTES, _PLIST_ENTRY) + ((_HTML_ROW, _NAMED_ELEMENT) if "</" in text else ()) \
        + ((_SQL_SETTING,) if "'" in text else ())
    for pattern in patterns:
        for match in pattern.finditer(text):
            label, value = match.group("label"), match.group("value").strip()
            if value and value_is_secret(label, value):
                yield Hit(match.start("value"), match.end("value"), kind_of(label))

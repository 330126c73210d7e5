"""Whether a value found where a secret goes is one. Values that only name or point at a secret are
kept: placeholders and masks (``changeme``, ``<your-api-key>``, ``${TOKEN}``, ``{{ secret }}``,
``****``, ``sk-...``, runs of ``x``), references to a secret store (Ansible ``!vault``, sops
``ENC[...]``, ``op://``, Key Vault references) or to where a command reads one (``env:NAME``,
``file:path``), code that reads one (``read_secret(...)``,
``self.password``), a type or a validator's rules where a value would be (``password: String!``,
``'required|string'``), prose after a label ("the password is too short"), and the example keys
vendors print in their documentation, which carry the word EXAMPLE (``AKIAIOSFODNN7EXAMPLE``):
documented examples are published to be copied and open nothing."""

from __future__ import annotations

import math
import re
from collections import Counter
from urllib.parse import unquote

PLACEHOLDER_WORDS = frozenset(
    "changeme change_me change-me changeit changethis password passwd passphrase pass pwd secret token apikey "
    "api_key api-key key value none null nil undefined true false yes no empty blank unset notset not_set redacted "
    "hidden masked mask placeholder sample dummy fake test testing todo tbd tbc xxx foo bar baz foobar qux "
    "string str text required optional default auto prompt ask stdin n/a na mypassword yourpassword mysecret "
    "yoursecret mytoken yourtoken secretkey secret_key replace_me replaceme insert_here "
    # Types a schema or an annotation names in a value's place (``password: string``, ``token: object``).
    "bool boolean int integer float number object bytes dict list any optional "
    # Encodings a format's description names where the value goes (``?secret=BASE32``).
    "base32 base64 base58 hex uuid "
    # Types that hold a secret in memory, and the generic ones around them (``token: SecretString``,
    # ``password: CharArray``, ``refresh_token: Option<…>``).
    "secretstr secretstring securestring secretbytes chararray bytearray option vec array "
    # Log levels, which a dotted logger's name ending in a credential's word is set to.
    "trace debug info warn warning error fatal off".split()
)
_TEMPLATE = re.compile(
    r"\$\{[^}]*\}|^\$\{[A-Za-z_][\w.]*\(|\$\(|^\$[A-Za-z_]\w*$|^\$\{[A-Za-z_]\w*:?[-=?+]|^\{(?:[A-Za-z_][\w.]*|\d*)(?:![rsa])?(?::[^{}\s]*)?\}$|^<[A-Za-z][\w-]*$|\{\{.*\}\}|\{%.*%\}|^\$?\{\{|^\{%|^<[^<>]*>$|%\(\w+\)s|^%\w+%$|^%s$|\[redacted|^\*+$"
    r"|!vault|\$ANSIBLE_VAULT|^ENC\[|^vault:|^(?:op|sm|gcpsm|awssm|azkv|bws|vault|infisical|doppler)://|^(?:env|file|fd):[\w./-]+$|@Microsoft\.KeyVault|^arn:aws:secretsmanager|^secretRef"
    r"|^(?:your|my|enter|insert|replace|put|paste)[-_ ]?[\w -]*(?:key|token|secret|pass\w*|word|here)$|[-_ ]here$"
    # Ruby's and Octopus's interpolation; CloudFormation's intrinsic functions, which name a parameter.
    r"|#\{[^}]*\}|^!(?:Ref|Sub|GetAtt|ImportValue|FindInMap|Join|Select|If|Base64|Split|Transform)\b"
    # Words asking for a value to be set (``change-me-in-production``); one with digits was chosen.
    r"|^(?=\D*$)[A-Za-z_ -]*change[-_ ]?(?:me|it|this)\b"
    # A note in brackets where a value would be: ``(empty)``, ``(not set)``.
    r"|^\([^()]*\)$"
    # An encoding's name with the credential's where a format's description puts the value (``?secret=BASE32SECRET``).
    r"|^(?:base32|base64|base58|hex)[-_]?(?:encoded[-_]?)?(?:secret|key|token|string|value)$",
    re.IGNORECASE,
)
_DOCUMENTED = re.compile(r"example", re.IGNORECASE)
_MASK_CHARS = "xX*•●·#?.…-_~"
_NOT_COUNTED = str.maketrans("", "", _MASK_CHARS)
_COUNTED = re.compile(r"[\w" + re.escape(_MASK_CHARS) + r"]")
_LOWER, _UPPER, _DIGIT, _SYMBOL = (re.compile(p) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^\w\s.-]"))
_CODE = re.compile(
    r"^[A-Za-z_]\w*(?:(?:\??\.+|::|->)\w+)*\??\.?[(\[]|^(?:self|this|cls|config|settings|conf|cfg|env|os|process|ctx|request|params|args|"
    r"options|opts|props|secrets|vars|creds|credentials)\.[\w.\[\]\"']+!?$"
    # A parenthesised call or attribute (``(self.auth[0]``), a Markdown link's text (``gate](x.md)``),
    # a dunder name (``__root__``).
    r"|^\(+[A-Za-z_]\w*(?:\.\w+)*[(\[]|^\(+[A-Za-z_]\w*(?:\.\w+)+$|^\S*\]\(|^__\w+__$"
    # An expression opened and not closed (``(Get-Secret -Name X)`` cut at its first space).
    r"|^\(+[A-Za-z_][\w-]*$",
)
_LABEL_WORD = re.compile(r"pass(?:word|wd|phrase)?|token|secret|key|pwd", re.IGNORECASE)
# A name in kebab case ending in a credential's word names where one is kept (``--secret=db-password``).
_CREDENTIAL_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:pass(?:word|wd|phrase)?|secret|token|key|pwd|credentials?)$")
# Kinds of symbol an expression that reads a secret uses at most (``os.environ["DB_PASSWORD"]``
# five); a generated salt mixes a dozen and more.
_MOST_CODE_SYMBOLS = 9
# A validator's rules joined by bars (Laravel's ``'required|string|min:12'``).
_RULE_LIST = re.compile(r"^[a-z_]+(?::[\w,.]+)?(?:\|[a-z_]+(?::[\w,.]+)?){2,}$")
# Codes that are no secret, named by the word before "code": a place's, an order's or a booking's,
# an offer's, an error's ("zip code", "promo code", "error code"); their digits are kept. So are a
# door's, a gate's or a lock's, household knowledge a memory is asked to keep (as under their label).
NOT_SECRET_CODES = frozenset(
    "zip postal post area country error status exit promo discount coupon voucher gift tracking product source qr bar "
    "order booking reservation reference ticket flight invoice customer member account referral invite course class "
    "room seat tax door gate garage lockbox locker lock bike".split())


def names_no_secret_code(text: str, code_start: int) -> bool:
    """Whether the word just before the "code" at ``code_start`` names a code that is no secret."""
    words = text[max(0, code_start - 24):code_start].split()
    return bool(words) and words[-1].lower() in NOT_SECRET_CODES


PROSE_WORDS = frozenset(
    "the a an your my our their his her its this that these those same see use ask set reset change changed check "
    "enter type not no yes is was are be been being must should will would can could cannot may might at in on for "
    "to from with without via by and or but if when then than too very so also only just still now again here there "
    "stored saved sent shared updated expired forgotten rotated managed strong weak long short simple easy hard good "
    "bad incorrect correct wrong invalid valid protected enabled disabled policy manager field hint prompt length "
    "rules requirements required optional unchanged missing empty blank case sensitive encrypted hashed secure "
    "insecure different new old same hidden visible reused expiring unknown known none something anything "
    "nothing what which who how why where where's isn't wasn't doesn't don't please under over above below "
    "read written shown given taken kept made held found stolen chosen got gotten lost left put built done "
    "longer shorter stronger weaker better worse safer easier harder more less".split()
)
_LETTERS, _DIGITS = re.compile(r"[A-Za-z]"), re.compile(r"[0-9]")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?$")
_MEASURE = re.compile(r"^\d+(?:[.,]\d+)?[A-Za-z%]{1,5}$")  # 2.4GHz, 16GB, 5V
_WORDY = re.compile(r"^[A-Za-z]+(?:[-_ ][A-Za-z]+)*$")


def shannon(text: str) -> float:
    """Bits per character of ``text`` as drawn from its own characters."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def masked(value: str) -> bool:
    """Mostly mask characters (``xxxx``, ``****``, ``sk_live_XXXX``): a shape, not a value."""
    counted = len(_COUNTED.findall(value))
    masks = len(value) - len(value.translate(_NOT_COUNTED))
    return counted > 0 and masks >= 4 and masks * 10 >= counted * 6


def documented_example(value: str) -> bool:
    return bool(_DOCUMENTED.search(value))


def placeholder(value: str) -> bool:
    """Stands for a secret without being one (a template, a mask, a reference, a documented example),
    as written or, when a URL escaped it, unescaped (``%3Cyour-password%3E``; ``%DB_PASSWORD%`` is
    Windows' variable as written)."""
    text = value.strip().strip("\"'`")
    return _stands_for_one(text) or ("%" in text and _stands_for_one(unquote(text)))


def _stands_for_one(text: str) -> bool:
    # A schema's type is the same word marked required or optional (GraphQL's ``String!``, ``Int?``).
    if not text or text.lower() in PLACEHOLDER_WORDS or text.rstrip("!?").lower() in PLACEHOLDER_WORDS:
        return True
    if text.endswith(("...", "\u2026")) and len(text.rstrip(".\u2026")) <= 12:
        return True
    return bool(_TEMPLATE.search(text)) or masked(text) or documented_example(text)


def code(value: str) -> bool:
    """Code that reads a secret (``get_password()``, ``self.token``, ``db_password``) holds none itself.
    A run of many kinds of symbol is no code however it starts (WordPress's salts, ``Tj[Mn…``)."""
    if len({c for c in value if not c.isalnum()}) >= _MOST_CODE_SYMBOLS:
        return False
    if _CODE.match(value) or _CREDENTIAL_NAME.match(value) or _RULE_LIST.match(value):
        return True
    return not any(c.isdigit() for c in value) and ("_" in value or "." in value) and bool(_LABEL_WORD.search(value)) \
        and value.replace("_", "").replace(".", "").isalpha()


def classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols ``value`` mixes (an upper-case first
    letter alone does not count)."""
    return sum(1 for found in (_LOWER.search(value), _UPPER.search(value, 1), _DIGIT.search(value),
                                _SYMBOL.search(value)) if found)


def generated(value: str, least: int = 8) -> bool:
    """Reads as made by a machine or a password rule rather than as words: long enough, and mixing
    digits, symbols or cases (``7fH2kLq9``, ``Tr0ub4dor&3``, a hex or base64 run)."""
    if len(value) < least or placeholder(value) or _VERSION.match(value) or _WORDY.match(value) or _MEASURE.match(value):
        return False
    if value.count(" ") >= 2:  # words, a query or code: a machine's key has no spaces
        return False
    if value.isdigit():
        return len(value) >= 20
    kinds = classes(value)
    return kinds >= 3 or (kinds == 2 and any(c.isdigit() for c in value)) or (
        kinds == 2 and len(value) >= 16 and shannon(value) >= 3.5)


def random_token(value: str) -> bool:
    """A long run that can only be a generated key (no label needed beside it): 20 characters or
    more, letters and digits mixed, near-random. Paths, URLs, versions and file names are not."""
    if len(value) < 20 or placeholder(value) or ("/" in value and "." in value) or "://" in value:
        return False
    if _VERSION.match(value) or re.search(r"\.[A-Za-z]{2,4}$", value):
        return False
    letters, digits = len(_LETTERS.findall(value)), len(_DIGITS.findall(value))
    return letters >= 4 and digits >= 2 and shannon(value) >= 3.3


def prose(value: str) -> bool:
    """A word of a sentence rather than a value ("the password is too short", "reset it")."""
    word = value.strip(".,;:!?\"'()").lower()
    return word in PROSE_WORDS or (word.isalpha() and word.endswith(("ed", "ing", "ly")))


# A mapping named for what it holds being encrypted (a SealedSecret's ``encryptedData:``) holds
# ciphertext that only the cluster's key opens, under the same names its secrets had: a long base64
# run there is kept. A short value is read as anywhere else, so that the name alone hides no password.
CIPHERTEXT = re.compile(r"[A-Za-z0-9+/]{100,}={0,2}")
_ENCRYPTED_MAPPING = re.compile(r"(?m)^(?P<indent>[ \t]*)[\"']?(?i:encrypted(?:[_-]?data)?)[\"']?[ \t]*:[ \t]*\r?$")
_LINE_INDENT = re.compile(r"(?m)^(?P<indent>[ \t]*)(?P<content>\S?)")


def encrypted_mappings(text: str) -> list[tuple[int, int]]:
    """Where the mappings that hold ciphertext lie: from their key's line to the next line
    indented no deeper than it."""
    if "ncrypted" not in text:
        return []
    spans: list[tuple[int, int]] = []
    for mapping in _ENCRYPTED_MAPPING.finditer(text):
        if spans and mapping.start() < spans[-1][1]:
            continue
        depth, end = len(mapping.group("indent")), len(text)
        for line in _LINE_INDENT.finditer(text, mapping.end() + 1):
            if line.group("content") and len(line.group("indent")) <= depth:
                end = line.start()
                break
        spans.append((mapping.end(), end))
    return spans

"""Credentials in URLs, and long random runs beside a credential word.

A URL's userinfo is read as a person pastes it, not as RFC 3986 wants it: any scheme
(``postgresql+psycopg2://``, ``mongodb+srv://``, ``jdbc:mysql://``), an empty user
(``redis://:pw@host``), and ``:``, ``/`` or ``@`` inside the password (the host follows the last
``@`` before the URL ends). A userinfo without ``:`` is a token when it looks generated
(``https://TOKEN@github.com``).

Beside a credential word ("here's the prod credential, handle with care 8fK2…", "the signing
secret is below" and the key on the next line), a run of 20 or more near-random characters is a
secret although no ``=`` or ``:`` ties it to the word; so is a shorter run of letters and digits
that only chance could have made ("sent you the key, in case: ZK2mq7Vn8xP4tR")."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from memvault.core.redaction.labels import PASSWORD, PUBLIC_KEY_VALUE, TOKEN, label_strength
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import generated, placeholder, random_token, shannon

_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://")
_AUTHORITY = re.compile(r"[^\s\"'<>`]{1,512}")
_HOST = re.compile(r"(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?=$|[/?#,;)\]}])")

# Services whose keys carry no prefix of their own ("mistral …", "my cloudflare one: …"): beside their
# name, as beside "key", only a run mixing lower case, upper case and digits counts.
_VENDORS = ("mistral|cohere|cloudflare|vercel|algolia|twitch|together|fireworks|deepgram|elevenlabs|serpapi|"
            "openweathermap|rapidapi|mailchimp|pinecone")
_CREDENTIAL_WORD = re.compile(
    r"(?i)(?<![a-z])(?:pass(?:word|wd|phrase)|secret|token|api[ _-]?key|credentials?|private[ _-]?key|"
    r"access[ _-]?key|signing[ _-]?key|auth(?:orization)?|session[ _-]?cookie|(?P<key>key|" + _VENDORS + r"))(?![a-z])"
)
# "Key" alone names public keys, database keys and keys of a map as well: beside it only a run that
# mixes lower case, upper case and digits counts, a short way on, unless a word before names
# another kind of key; and never an SSH public key's body, which opens with the length of its
# type's name (``AAAA…``).
_OTHER_KEY_BEFORE = re.compile(
    r"(?i)(?:public|publishable|pub|ssh|gpg|pgp|host|primary|foreign|sort|partition|cache|idempotency|row|object|map|dict|"
    r"composite|unique|index|lookup|routing|hash|encryption|kms|s3)[ \t_-]*\Z"
)
_KEY_NEARBY = 60
_MIXED = re.compile(r"(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=\D*\d)")
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{20,1024}")
# Shorter, a run is a key or a password only when nothing but chance could have made it: letters and
# digits alone, upper case and digits twice each, and no four lower-case letters together (which
# a name, a word in camelCase or a model number has).
_SHORT_CANDIDATE = re.compile(r"[A-Za-z0-9]{12,19}(?![A-Za-z0-9+/=_.~-])")
_FOUR_LOWER = re.compile(r"[a-z]{4}")
# Where a run starts: a window looks at the runs that start inside it, however far they reach.
_RUN_START = re.compile(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]")
# A hash named as one, or a data URI's content (an image, a font) is no secret.
_NOT_SECRET_BEFORE = re.compile(r"(?i)(?:commit|sha\d*|hash|digest|checksum|rev(?:ision)?|id|uuid)[\s:=#@]*$|;base64,$")
_VAULTED = re.compile(r"\s*[:=]?\s*(?:!vault|ENC\[|\$ANSIBLE_VAULT)")
_NEARBY = 120
_ENCRYPTED_REACH = 400
_FRAME_REACH = 8000
_PUBLIC_FRAME = re.compile(r"-----BEGIN (?:(?:RSA |EC |SSH2 )?PUBLIC KEY|CERTIFICATE(?: REQUEST)?|X509 CRL)-----")
_ARN_SECRET = re.compile(r"arn:aws[\w-]*:secretsmanager:[^\s\"']{0,80}:secret:\Z")
_ARN_REACH = 120
# A deployment's pod: its name, its replica set's hash and five characters of its own.
_POD_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*-[a-z0-9]{8,10}-[a-z0-9]{5}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SETTING_NAME = re.compile(r"[A-Za-z_][A-Za-z_.-]*=")
_SETTING_BEFORE = re.compile(r"[ \t]*(?:export[ \t]+)?[\"']?(?P<name>[A-Za-z_][\w.-]{0,60})[\"']?[ \t]*[:=][ \t]*[\"']?")
# Go's MySQL driver names its server without a scheme: ``user:password@tcp(host:port)/db``.
# Found by its rare ``@tcp(`` and read back from there, so that no run of text is read twice.
_DRIVER_ADDRESS = re.compile(r"@(?:tcp|tcp6|unix|udp)\(")
_DRIVER_USERINFO = re.compile(r"[\w.-]{1,64}:[^\s@\"'`]{1,300}\Z")
_DSN_REACH = 365
# A Sentry DSN's key (``https://<key>@o1.ingest.sentry.io/2``) only lets a client send events to
# its project: it ships in every page that reports errors, as a publishable key does.
_EVENT_INTAKE_HOST = re.compile(r"(?:[\w-]+\.)*sentry\.io(?![\w.-])")


def userinfo(text: str) -> Iterator[Hit]:
    for scheme in _SCHEME.finditer(text):
        authority = _AUTHORITY.match(text, scheme.end())
        if authority is None:
            continue
        candidate = authority.group(0)
        # A userinfo ends before the next URL starts (``…?next=https://x:${TOKEN}@…``): its "@" is not this one's.
        if (following := _SCHEME.search(candidate, 1)) is not None:
            candidate = candidate[:following.start()]
        at = candidate.rfind("@")
        while at > 0 and not _HOST.match(candidate, at + 1):
            at = candidate.rfind("@", 0, at)
        if at <= 0:
            continue
        info, start = candidate[:at], authority.start()
        user, colon, password = info.partition(":")
        if "/" in user:  # an @ in a path, not a userinfo
            continue
        if colon:
            if password and not placeholder(password):
                yield Hit(start + len(user) + 1, start + at, PASSWORD)
        elif generated(user, 16) and not _EVENT_INTAKE_HOST.match(candidate, at + 1):
            yield Hit(start, start + at, TOKEN)
    for address in _DRIVER_ADDRESS.finditer(text):
        start = address.start()
        while start > 0 and address.start() - start < _DSN_REACH and text[start - 1] not in " \t\r\n@\"'`":
            start -= 1
        if (found := _DRIVER_USERINFO.match(text, start, address.start())) is None:
            continue
        secret = found.start() + found.group(0).index(":") + 1
        if not placeholder(text[secret:address.start()]):
            yield Hit(secret, address.start(), PASSWORD)


def _base64_prompt(value: str) -> bool:
    """A protocol's prompt in base64, as SMTP's AUTH LOGIN sends ``VXNlcm5hbWU6`` ("Username:")."""
    if len(value) % 4:
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return decoded.endswith(":") and decoded[:-1].replace(" ", "").isalpha()


def near_credential_words(text: str) -> Iterator[Hit]:
    scanned = [0, 0]  # candidates that start before these were looked at already (beside "key", beside the rest)
    for word in _CREDENTIAL_WORD.finditer(text):
        alone = word.group("key") is not None
        if _VAULTED.match(text, word.end()):
            continue
        start = max(word.end(), scanned[alone])
        reach = min(len(text), word.end() + (_KEY_NEARBY if alone else _NEARBY))
        scanned[alone] = max(scanned[alone], reach)
        for found in _RUN_START.finditer(text, start, reach):
            run = _CANDIDATE.match(text, found.start())
            if run is None:
                if (short := _SHORT_CANDIDATE.match(text, found.start())) is not None and _short_random(short.group(0)):
                    yield Hit(short.start(), short.end(), TOKEN)
                continue
            value, start = run.group(0).rstrip(".="), run.start()
            if (setting := _SETTING_NAME.match(value)) is not None:
                # ``code_challenge_method=S256``: a setting's name is no part of the run its value is.
                value, start = value[setting.end():], start + setting.end()
            if alone and (not _MIXED.match(value) or value.startswith("AAAA")
                          or _OTHER_KEY_BEFORE.search(text, max(0, word.start() - 20), word.start())):
                continue
            if _own_setting(text, word.end(), start) or _git_object(text, value, start):
                continue
            if random_token(value) and not PUBLIC_KEY_VALUE.match(value) \
                    and not _NOT_SECRET_BEFORE.search(text, max(0, start - 12), start) \
                    and not _named_elsewhere(text, start, value):
                yield Hit(start, run.end(), TOKEN)


_GIT_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _git_object(text: str, value: str, start: int) -> bool:
    """A git object's id where git and its tools print one: first on a line of a log, before the
    commit's subject (``git log --oneline``), or a pinned action after ``@`` (``uses: …@<sha>``)."""
    if not _GIT_OBJECT.fullmatch(value):
        return False
    line = text.rfind("\n", 0, start) + 1
    end = start + len(value)
    if not text[line:start].strip() and text[end:end + 1] == " ":
        return True
    return text[start - 1:start] == "@" and "uses:" in text[line:start]


def _own_setting(text: str, word_end: int, start: int) -> bool:
    """A run on a line after the credential's word that a setting of its own names, and no
    credential's name (``ANTHROPIC_MODEL=claude-3-5-sonnet-20241022`` below an API key's line).
    A setting indented under the word's line is one of its fields (``secret:`` then ``  value: …``)."""
    if text.find("\n", word_end, start) < 0:
        return False
    line = text.rfind("\n", 0, start) + 1
    setting = _SETTING_BEFORE.fullmatch(text, line, start)
    if setting is None or label_strength(name := setting.group("name")) is not None or _CREDENTIAL_WORD.search(name):
        return False
    word_line = text.rfind("\n", 0, word_end) + 1
    return _indent(text, line) <= _indent(text, word_line)


def _indent(text: str, line: int) -> int:
    end = line
    while end < len(text) and text[end] in " \t":
        end += 1
    return end - line


def _named_elsewhere(text: str, start: int, value: str) -> bool:
    """A run that is no secret where it stands: inside sops' ``ENC[…]`` (ciphertext) or a public
    key's or a certificate's PEM frame, a secret's name in an ARN, a Kubernetes pod's name, or a
    UUID (``Idempotency-Key``, a request's id)."""
    opened = text.rfind("ENC[", max(0, start - _ENCRYPTED_REACH), start)
    if opened >= 0 and "]" not in text[opened:start]:
        return True
    framed = text.rfind("-----BEGIN ", max(0, start - _FRAME_REACH), start)
    if framed >= 0 and _PUBLIC_FRAME.match(text, framed) and "-----END " not in text[framed:start]:
        return True
    if _ARN_SECRET.search(text, max(0, start - _ARN_REACH), start):
        return True
    return bool(_POD_NAME.fullmatch(value) or _UUID.fullmatch(value))


def _short_random(value: str) -> bool:
    return not _base64_prompt(value) and sum(c.isdigit() for c in value) >= 2 and sum(c.isupper() for c in value) >= 2 \
        and any(c.islower() for c in value) and _FOUR_LOWER.search(value) is None and shannon(value) >= 3.3

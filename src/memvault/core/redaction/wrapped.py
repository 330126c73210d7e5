"""Secrets wrapped in base64 where the text itself unwraps them: a literal piped to ``base64 -d``
or passed to a decoding call (``b64decode``, ``atob``, ``Buffer.from(…, 'base64')``,
``FromBase64String``, ``base64_decode``, ``Base64.decode64``, ``DecodeString``); a mapping's
value that is base64 alone on its line, as a Kubernetes Secret's ``data:`` holds each value; and a
run of base64 standing alone that decodes to text. The literal is
decoded and gated like any text; it goes when what it wraps holds a secret or is a ``user:password``
pair, as HTTP Basic and registry logins encode one."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from itertools import islice

from memvault.core.redaction.labels import PASSWORD
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import generated

_LITERAL = r"[\"']?(?P<{name}>[A-Za-z0-9+/_-]{{8,4096}}={{0,2}})[\"']?"
_DECODED = re.compile(
    r"(?<![\w-])(?:echo|printf)[ \t]+(?:-n[ \t]+)?" + _LITERAL.format(name="piped")
    + r"[ \t]*\|[ \t]*(?:base64|openssl[ \t]+(?:base64|enc[ \t]+-base64))[ \t]+(?:-d|--decode|-D)\b"
    r"|(?<![\w-])base64[ \t]+(?:-d|--decode|-D)[ \t]+<<<[ \t]*" + _LITERAL.format(name="herestring")
    + r"|(?<!\w)(?:b64decode|urlsafe_b64decode|decodebytes|atob|FromBase64String|base64_decode|decode64|"
    r"DecodeString|Buffer\.from)[ \t]*\([ \t]*" + _LITERAL.format(name="called")
)
_PAIR = re.compile(r"^[^\s:]{1,64}:(?P<password>\S{1,300})$")
# A mapping's value that is base64 alone on its line, as a Kubernetes Secret's ``data:`` holds
# every value (``.dockerconfigjson: eyJhdXRocyI6…``): whatever its key's name, it is opened.
_MOST_MAPPED = 32
# A registry pull secret's keys hold nothing but a registry's logins, however the base64 was cut.
_REGISTRY_LOGINS = frozenset({".dockerconfigjson", ".dockercfg"})  # a Secret holds a few; a page of them is a page of data, not a Secret
# A run of base64 standing alone, long enough to wrap a key (``c2stcHJvai1…``): it is opened too, and
# goes when what it wraps is a secret; a hash, an id or an image decodes to bytes that are no text.
_ALONE = re.compile(r"(?<![A-Za-z0-9+/=_-])(?P<alone>[A-Za-z0-9+/]{24,4096}={0,2})(?![A-Za-z0-9+/=_-])")
_MOST_ALONE = 32
_MAPPED = re.compile(r"(?m)^[ \t]*(?P<key>[\w.-]{1,100})[ \t]*:[ \t]+(?P<mapped>[A-Za-z0-9+/]{16,8192}={0,2})[ \t]*\r?$")


def _unwrapped(literal: str) -> str | None:
    try:
        raw = base64.b64decode(literal.replace("-", "+").replace("_", "/") + "=" * (-len(literal) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return decoded if decoded.isprintable() or decoded.strip().isprintable() else None


_HEX_ALONE = re.compile(r"(?<![0-9A-Za-z])(?:(?:[0-9a-f]{2}){12,2048}|(?:[0-9A-F]{2}){12,2048}"
                        r"|[0-9a-fA-F]{2}(?: [0-9a-fA-F]{2}){11,2047})(?![0-9A-Za-z])")


def _unhexed(run: str) -> str | None:
    try:
        decoded = bytes.fromhex(run).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    return decoded if decoded.isprintable() else None


# LDIF gives an attribute's value in base64 after two colons (``userPassword:: …``): a password's is
# the password, whatever it decodes to (a hash's scheme is in braces, which base64 hides).
_LDIF_PASSWORD = re.compile(r"(?im)^[ \t]*[\w-]*password[\w-]*::[ \t]*(?P<value>[A-Za-z0-9+/]{4,}={0,2})[ \t]*\r?$")


def base64_wrapped(text: str) -> Iterator[Hit]:
    from memvault.core.redaction import redact

    if "::" in text:
        for attribute in _LDIF_PASSWORD.finditer(text):
            yield Hit(attribute.start("value"), attribute.end("value"), PASSWORD)

    for match in islice(_HEX_ALONE.finditer(text), _MOST_ALONE):
        # Hex of text (``70617373776f72643d…``, or bytes apart as a dump prints them): a digest's
        # bytes are no text, so only what decodes to text is read.
        decoded = _unhexed(match.group(0))
        if decoded is not None and redact(decoded).kinds:
            yield Hit(match.start(), match.end(), PASSWORD)

    named = [*_DECODED.finditer(text), *islice(_MAPPED.finditer(text), _MOST_MAPPED)]
    # A run standing alone that a decoding call or a mapping already names is opened once, as theirs.
    opened = {match.start(match.lastgroup or 0) for match in named}
    alone = (match for match in _ALONE.finditer(text) if match.start("alone") not in opened)
    for match in (*named, *islice(alone, _MOST_ALONE)):
        group = next(name for name in ("piped", "herestring", "called", "mapped", "alone")
                     if match.groupdict().get(name) is not None)
        if group == "mapped" and match.group("key") in _REGISTRY_LOGINS:
            yield Hit(match.start(group), match.end(group), PASSWORD)
            continue
        decoded = _unwrapped(match.group(group))
        if decoded is None:
            continue
        # Standing alone, only what the gate finds in it counts: a JSON object reads as a user:password pair.
        pair = None if group == "alone" else _PAIR.match(decoded.strip())
        if (pair is not None and generated(pair.group("password"), 6)) or redact(decoded).kinds:
            yield Hit(match.start(group), match.end(group), PASSWORD)

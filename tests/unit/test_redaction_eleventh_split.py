"""The secret gate on shapes an eleventh probe exposed: a password whose label and value are apart
by the words of a sentence that say who uses it or since when ("the password I use for everything:
…", "my password everywhere is …", "the PIN we share at home is …"), and a code or a numeric
password told in groups of digits ("OTP 841 927", "8-4-1-9-2-7"). Each keeps the look-alikes
beside it: the same sentences going on in words, a rule about a password, and numbers in groups
under a label that names no secret (a zip code, an error, a length)."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("i always use the same password everywhere: Heron-Lake-62", "Heron-Lake-62"),
    ("my netflix password everywhere is quietfox1988", "quietfox1988"),
    ("the password I use for everything: Copper!Vale7", "Copper!Vale7"),
    ("the wifi password we share at home is lanternbay55", "lanternbay55"),
    ("The admin password you gave me was Sable#Road31", "Sable#Road31"),
    ("the login password that works = harbor-gull-09", "harbor-gull-09"),
    ("my bank password these days - Orchid7Tide", "Orchid7Tide"),
    ("the passcode he set: Pine&Step40", "Pine&Step40"),
    ("our router password nowadays is mossyfern2021", "mossyfern2021"),
    ("your one-time passcode is 8 4 1 9 2 7", "8 4 1 9 2 7"),
    ("verification code: 306 418", "306 418"),
    ("OTP 520 913, valid for five minutes", "520 913"),
    ("the verification code is 7-3-0-5-1-2", "7-3-0-5-1-2"),
    ("the access code is 61 48 27", "61 48 27"),
    ("my phone's PIN is 24 68", "24 68"),
    ("my password is 3141 5926", "3141 5926"),
]

LOOK_ALIKES = [
    "the password you gave me was wrong",
    "the password I use for everything: the same one as my email",
    "my password everywhere is the same, I know that is bad",
    "the password that works is the old one",
    "the password we share is written on the fridge",
    "password policy everywhere: twelve characters at least",
    "password length 12 16",
    "the password length is 12 16 characters",
    "zip code 10 001",
    "error code 500 503",
    "postal code: 75 001",
    "the PIN has 4 or 6 digits",
    "PIN 4 6 8",
    "the code is 3 4 pages long",
    "verification code: 6 digits, sent by SMS",
    "OTP 3 attempts left",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)

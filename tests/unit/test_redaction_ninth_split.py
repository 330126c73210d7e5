"""The secret gate on shapes the ninth held-out split exposed, each in words other than the
corpus's own: a seed or a static key in an armoured frame, Windows' NT hashes and captured NetNTLM
responses, a cracker's hash-and-password line, a Kerberos keytab in base64, any service's incoming
webhook path, the line an SMTP client answers the server's base64 password prompt with, recovery
codes under a qualified label, in a file's name or after the account's line, a PIN's "code", a
PIN abroad, one said a digit at a time, a password's part or encoding named before its colon, a
PIN whose owner stands between label and value, Cisco's type number before a password, digits
after a password's name and a space, and a security question's answer on the "A:" line after its
"Q:" line. Each keeps the look-alikes beside it: a recovery key's ID, a
protocol's prompt in base64, a credential's word given as a translation, public frames, a
checksum beside a file's path and a hook's numeric id."""

from __future__ import annotations

import base64

from redaction_shapes import shape_checks

_HEX32 = "9c1e5a7b3d2f4e6a8b0c1d3e5f7a9b2c"
_MIXED = "Kq7mZ2Wx4Rt9"
_BASE32_SEED = "SAAGH4PRDJKQ3M7XZVWA2B5YFLNUOCSEI6TDR4HQPJGNKM2WZXV7Y3AB"

SECRETS = [
    ("-----BEGIN ACCOUNT NKEY SEED-----\n" + _BASE32_SEED + "\n------END ACCOUNT NKEY SEED------", _BASE32_SEED),
    ("-----BEGIN OpenVPN Static key V1-----\n" + _HEX32 + "\n" + _HEX32[::-1] + "\n-----END OpenVPN Static key V1-----",
     _HEX32),
    ("svc_sql:1104:aad3b435b51404eeaad3b435b51404ee:" + _HEX32 + ":::", _HEX32),
    ("alice::WORKGROUP:0102030405060708:" + _HEX32.upper() + ":" + "0101" + _HEX32 * 2, _HEX32 * 2),
    ("hashcat --show hashes.txt\n" + _HEX32 + ":Winter!Harbor7", "Winter!Harbor7"),
    ("keytab for HTTP/web01: BQIAAAB" + _MIXED * 6, _MIXED * 6),
    ("post alerts to https://ci.example.org/api/webhooks/" + _MIXED * 2, _MIXED * 2),
    ("S: 334 UGFzc3dvcmQ6\n" + base64.b64encode(b"Tide#Pool42").decode(),
     base64.b64encode(b"Tide#Pool42").decode()),
    ("Backup sign-in codes\n\n1. 4471 9023\n2. 5560 1187", "4471 9023"),
    ("saved to recovery-codes.txt:\n7f3a1-c92e4\nb81d0-5e6f2", "7f3a1-c92e4"),
    ("recovery codes\nops@example.net\n90417-22c8b", "90417-22c8b"),
    ("the SIM's PIN code: 73519", "73519"),
    ("ПІН-код: 2846", "2846"),
    ("the pin is 9 3 0 2", "9 3 0 2"),
    ("wifi password starts with: Qz9!rT", "Qz9!rT"),
    ("router password base64-encoded: " + base64.b64encode(b"Lark#77x").decode(), base64.b64encode(b"Lark#77x").decode()),
    ("Le PIN mon compte est 4490", "4490"),
    ("enable password 7 121A0C0411045D5679", "121A0C0411045D5679"),
    ("银行密码 583920", "583920"),
    ("Q: What was the name of your first school?\nA: Linden Park Primary", "Linden Park Primary"),
]

LOOK_ALIKES = [
    "BitLocker recovery key ID: 1B2C3D4E-5F60-4A1B-8C2D-3E4F5A6B7C8D",
    "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6",
    "'password' in Russian is пароль",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + _MIXED * 4 + "\n-----END PUBLIC KEY-----",
    _HEX32 + ":src/app.py",
    "git show " + _HEX32 + "0a1b2c3d:Makefile",
    _HEX32 + ":12345",
    "https://github.com/acme/api/settings/hooks/412345678",
    "the recovery codes are shown once, keep them",
    "the password 2 weeks ago was different",
    "pin 3 on the header is ground",
    "Q: What was your first car?\nA: a hand-me-down from my aunt",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)

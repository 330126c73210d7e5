"""The secret gate on shapes the tenth held-out split exposed, each in words other than the
corpus's own: an element whose ``name`` attribute labels its text, a KeePass field, a credential's
word in mixed case, a label written with JSON's escapes, a login call without brackets, with the
scheme as a symbol or the password wrapped, an app password in groups, a user and password given
as one literal, MySQL's ``SET PASSWORD``, a password in ``/etc/passwd``'s place, a session cookie
made in code, a domain's cached logon hash, a roasted Kerberos ticket, an NT hash under its own
name, invitation and sign-in links, an OAuth callback's code, a setup key with one digit after a
second factor's word, a login paired after a comma, words of a language between its label and the
colon, and password labels in more languages. Each keeps the look-alikes beside it: an account
locked or kept elsewhere in ``/etc/passwd``, a property that names no credential, an escape that
is no letter inside a word, an OAuth URL that asks for a code, a short code, a link to a page and
a cookie holding a preference."""

from __future__ import annotations

from redaction_shapes import shape_checks

_HEX32 = "4be1c0d97a3f28e65b0d1c2a3f4e5d6c"
_MIXED = "Tq8nW3zKp5Rv"

SECRETS = [
    ('<entry name="jdbc.password">Quill!Harbor9</entry>', "Quill!Harbor9"),
    ("<Key>Password</Key>\n<Value ProtectInMemory=\"True\">0tter-Lamp4</Value>", "0tter-Lamp4"),
    ("SeCrEt: Maple-Forge-88", "Maple-Forge-88"),
    ('{"tok\\u0065n": "' + _MIXED * 2 + '"}', _MIXED * 2),
    ("http.basic_auth 'ops', 'Cedar-V4le'", "Cedar-V4le"),
    ("builder.request :authorization, :basic, 'svc', 'B1rch-Dock'", "B1rch-Dock"),
    ('.basic_auth("svc", Some("F3rn-Quay"))', "F3rn-Quay"),
    ('mail.login("me@example.org", "qwAs ZxDe 4rFv Bg5t")', "qwAs ZxDe 4rFv Bg5t"),
    ("opts[:userpwd] = 'deploy:Sl4te-Mill'", "Sl4te-Mill"),
    ("SET PASSWORD = PASSWORD('Her0n-Pike');", "Her0n-Pike"),
    ("svc:Gull!Marsh48:1002:1002:Service:/srv/svc:/usr/sbin/nologin", "Gull!Marsh48"),
    ('var c = new Cookie("session_id", "' + _MIXED * 2 + '");', _MIXED * 2),
    ("EXAMPLE/ops:$DCC2$10240#ops#" + _HEX32, "$DCC2$10240#ops#" + _HEX32),
    ("$krb5asrep$23$ops@CORP.TEST:" + _HEX32 + "$" + _HEX32[::-1] + _HEX32[5:] + _HEX32[:5],
     "$krb5asrep$23$ops@CORP.TEST:" + _HEX32),
    ("NT hash = " + _HEX32, _HEX32),
    ("join the workspace: https://chat.example.org/invitation/" + _MIXED * 2, _MIXED * 2),
    ("https://id.example.org/oauth/cb?state=q1&code=" + _MIXED * 3, _MIXED * 3),
    ("authenticator setup key: MZXW 6YTB OJRG KZLT", "MZXW 6YTB OJRG KZLT"),
    ("sign-in for the staging box, ops / Wr3n-Cove", "Wr3n-Cove"),
    ("kata sandi email kantor: Te4l-Reef", "Te4l-Reef"),
    ("pasfhocal: Dun3-Glen", "Dun3-Glen"),
    ("პაროლი: M1st-Pond", "M1st-Pond"),
    ("pinkod: 6281", "6281"),
    ("το PIN του λογαριασμού είναι 7305", "7305"),
    ("klucz API: " + _MIXED * 3, _MIXED * 3),
]

LOOK_ALIKES = [
    "daemon:x:2:2:daemon:/sbin:/usr/sbin/nologin",
    "games:*:5:60:games:/usr/games:/usr/sbin/nologin",
    '<property name="hibernate.dialect">org.hibernate.dialect.PostgreSQLDialect</property>',
    "<Key>Title</Key><Value>Home router</Value>",
    '{"text": "\\u0041 is the first letter"}',
    "https://id.example.org/oauth/authorize?response_type=code&client_id=app-123&state=q1",
    "https://shop.example.org/checkout?code=SPRING24",
    "see https://docs.example.org/invite/how-it-works for details",
    'new Cookie("theme", "dark-high-contrast-v2")',
    "auth 'on', 'off' toggles it",
    "PaSsWoRd policy: at least twelve characters",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)

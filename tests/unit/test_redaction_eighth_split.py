"""The secret gate on shapes the eighth held-out split exposed, each in words other than the
corpus's own: vendors' tokens it lacked (Fireworks, Clojars, Square, Buildkite, CircleCI, Lob,
Asana, Firebase's server keys, Matrix, Okta's ``SSWS``, a Mapbox secret token without its
signature), a JWS whose payload is not JSON, a SAML response in base64, Tor's and .NET's private
keys, a PKCS#12 bundle in base64, a key pair as a list of 64 bytes, framework session cookies and
curl's ``-b``, a HAR's or Postman's name/value pairs, a secret piped into a command that stores it,
an HTML table's row, a key-value table's SQL, a value in parentheses, a label drawn with Cyrillic
letters, an app password after its label and a registry pull secret. Each keeps the look-alikes
beside it: schema types, validation rules, a secret's name, a key file's path, a Sentry DSN, a
shell's required variable and pairs, rows and lists that hold nothing secret."""

from __future__ import annotations

import base64

from redaction_shapes import shape_checks

_HEX40 = "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"
_MIXED = "Kq7mZ2Wx4Rt9"
_SAML = base64.b64encode(
    b'<saml2p:Response xmlns:saml2p="urn:oasis:names:tc:SAML:2.0:protocol" ID="_8e8dc5f69a98cc4c1ff3427e5ce34606fd672f91e6"'
    b' Version="2.0" IssueInstant="2026-01-01T00:00:00Z">'
).decode()
_KEY_PAIR = ", ".join(str((index * 89 + 17) % 256) for index in range(64))
_BINARY = base64.b64encode(bytes(range(128, 218))).decode()

SECRETS = [
    ("try fw_" + _MIXED * 2, "fw_" + _MIXED * 2),
    ("deploy with CLOJARS_" + _HEX40 + "9f1e2d3c4b5a69781234", _HEX40),
    ("Square: EAAA" + _MIXED * 5, _MIXED * 5),
    ("agent bkua_" + _HEX40, _HEX40),
    ("CCIPRJ_" + _MIXED + "abcd_" + _HEX40, _HEX40),
    ("1/1204567890123456:" + _HEX40[:32], _HEX40[:32]),
    ("AAAA" + "Zx9_q-w:APA91b" + _MIXED * 10, _MIXED * 10),
    ("syt_YWxpY2U_" + _MIXED + "AbCdEfGh_3xQ9Lp", _MIXED + "AbCdEfGh"),
    ("okta: SSWS 00" + _MIXED * 4, _MIXED * 4),
    ("sk.eyJ1IjoiYWxpY2UiLCJhIjoi" + _MIXED * 3, _MIXED * 3),
    ("test_" + _HEX40[:35], _HEX40[:35]),
    ("decode eyJhbGciOiJFUzI1NiJ9." + "cGF5bG9hZC1ub3QtanNvbg" + "." + _MIXED * 3, _MIXED * 3),
    ("SAMLResponse=" + _SAML, _SAML[40:]),
    ("ADD_ONION RSA1024:" + _MIXED * 8, _MIXED * 8),
    ("<RSAKeyValue><InverseQ>" + _MIXED * 3 + "==</InverseQ></RSAKeyValue>", _MIXED * 3),
    ("bundle.p12: MIIJqQIBAzCCCW8GCSqGSIb3DQEHAaCC" + _MIXED * 5, _MIXED * 5),
    ("wallet.json = [" + _KEY_PAIR + "]", _KEY_PAIR),
    ("Cookie: .AspNetCore.Cookies=CfDJ8" + _MIXED * 3, _MIXED * 3),
    ("wordpress_logged_in=alice%7C1760000000%7C" + _MIXED * 2, _MIXED * 2),
    ("curl --cookie 'sid=" + _MIXED * 2 + "' https://shop.example/cart", _MIXED * 2),
    ('[{"name": "remember_web", "value": "' + _MIXED * 3 + '"}]', _MIXED * 3),
    ('{"key": "refresh_token", "value": "' + _MIXED * 2 + '"}', _MIXED * 2),
    ("echo " + _MIXED * 3 + " | fly secrets set API_TOKEN=-", _MIXED * 3),
    ("echo Vc9!envAdd77 | vercel env add DATABASE_URL production", "Vc9!envAdd77"),
    ("<td>Secret</td><td>Lq4&#64;mZ9&#33;pWt</td>", "Lq4&#64;mZ9&#33;pWt"),
    ("<dl><dt>Admin password</dt><dd>Hr7$Table-91</dd></dl>", "Hr7$Table-91"),
    ("update config set value='Zx9!Sql-Setting' where name='api_secret';", "Zx9!Sql-Setting"),
    ('auth = ("Hq7mZ2xLp4"  # one half\n    "tail")', "Hq7mZ2xLp4"),
    ("t\u043eken = " + _MIXED * 3, _MIXED * 3),
    ("\u0430pi_k\u0435y: " + _MIXED * 3, _MIXED * 3),
    ("icloud app password wxyz qrst uvwk lmno", "wxyz qrst uvwk lmno"),
    ("data:\n  .dockercfg: " + _BINARY, _BINARY),
]

LOOK_ALIKES = [
    "type Mutation {\n  signIn(email: String!, password: String!): Session\n}",
    "pub struct Config {\n    pub api_key: Option<SecretString>,\n}",
    "fun login(user: String, password: ByteArray)",
    "'api_token' => 'nullable|string|max:80',",
    "gcloud secrets describe --secret=stripe-api-key",
    "tls_key: ./certs/server.key",
    "ssl_certificate_key /etc/nginx/certs/dev.key;",
    "ssl_certificate_key ~/certs/dev.key;",
    "SENTRY_DSN=https://" + _HEX40[:32] + "@o12345.ingest.us.sentry.io/678",
    "api:\n  environment:\n    - API_KEY=${API_KEY:?API_KEY must be set}",
    "the t\u043ekyo office moved to the 4th floor",
    "<tr><th>Password</th><td>********</td></tr>",
    "<th>Token</th><td>(not set)</td>",
    "UPDATE settings SET value = 'dark' WHERE key = 'theme';",
    '{"name": "theme", "value": "dark"}',
    '{"name": "session", "value": "expired"}',
    "weights = [" + ", ".join(str(index * 7) for index in range(64)) + "]",
    "curl -b 'lang=en-GB' https://shop.example/",
    "echo done | wrangler secret list",
    "<P>short</P>",
    "create an app password in your account settings",
    "fw_UpdateFirmwareHandler(dev, image)",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)

"""The secret gate on shapes a fifteenth probe exposed: a phone's unlock code, an alarm's code and
an access code named in Spanish, Italian or German, a security question and its answer in French,
German, Spanish or Italian, a one-time code set in bold by an e-mail, the rest of a split key on a
list's line, and a session cookie in a browser's exported cookies file. Each keeps the look-alikes
beside it: commit ids in a log after a subject naming a token, an action pinned to a commit after
its name, git's credential section for a host, a command line's option after an argument naming a
token, a word talked about backwards, a discount code, a door's code, an answer that is no
security question's, and a cookie that holds a setting."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("il codice di sblocco dell'iPad è 731904", "731904"),
    ("código de desbloqueo del móvil: 58213", "58213"),
    ("Entsperrcode vom Handy: 902177", "902177"),
    ("codice allarme di casa: 44170", "44170"),
    ("Question de sécurité : ville de naissance ? Réponse : Besançon", "Besançon"),
    ("Sicherheitsfrage - erstes Auto? Antwort: Käfer", "Käfer"),
    ("Pregunta secreta: ¿tu primer colegio? Respuesta: Cervantes", "Cervantes"),
    ("Domanda di sicurezza: il tuo primo animale? Risposta: Briciola", "Briciola"),
    ("<td>Your login code is <b>820417</b></td>", "820417"),
    ("Your Acme code: **551902** (valid 5 minutes)", "551902"),
    ("deploy token, split:\n* part 1: glpat-Xq7LmN2vKp9RtZ4w\n* part 2: Hy8TbC3dFg6JsW1e", "Hy8TbC3dFg6JsW1e"),
    ("app.example.org\tFALSE\t/\tTRUE\t1799999999\tauth_token\tQm8xTz2VbN7cLp4WkR9sYd3F", "Qm8xTz2VbN7cLp4WkR9sYd3F"),
]

LOOK_ALIKES = [
    "4f9c2e1ab83d5e7f60a1b2c3d4e5f60718293a4b Refresh the token cache on start\n"
    "9a8b7c6d5e4f30211203948576abcdef01234567 Docs: rotate credentials yearly",
    "      - uses: example-org/setup-credentials@0123456789abcdef0123456789abcdef01234567",
    '[credential "https://git.example.com"]\n\tusername = deploy-bot',
    'args: ["auth", "print-access-token", "--project", "demo"]',
    "In the puzzle, 'nekot' is 'token' read backwards.",
    "codice di sconto: 240087, valido fino a domenica",
    "Türcode vom Hof: 4471",
    "app.example.org\tFALSE\t/\tFALSE\t1799999999\ttheme\tdark-high-contrast-2024",
    "Frage: Kommst du morgen? Antwort: Ja, um acht.",
]

test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)

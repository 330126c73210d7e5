"""Second factors: what signs someone in without their password, or in place of their phone.
An authenticator's setup key as apps show it (base32 in groups of four, ``GFSF H2H3 LEPE …``)
after a word that names one; the recovery or backup codes a service hands out once, listed after
their label (``f4fc8-24a01``, ``0742 9265``, numbered or bulleted, one a line or comma-separated);
a one-time code that a message puts before "is your … code", hands its reader to use ("Enter …
to sign in") or gives as theirs ("Your Uber code: …");
and a BitLocker recovery key, whose eight groups of six digits need no label. A label followed by
words (``recovery codes are shown once``) takes nothing: every code holds a digit."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.core.redaction.labels import ONE_TIME_CODE, PASSWORD
from memvault.core.redaction.numbers import CARD_CODE
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import NOT_SECRET_CODES, names_no_secret_code

RECOVERY_CODE = "recovery_code"
TOTP_SECRET = "totp_secret"

_BITLOCKER = re.compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")
_SETUP_WORD = re.compile(
    r"(?i)(?<![a-z])(?:2fa|mfa|totp|otp|two[ -]factor|authenticator|setup[ _-]?key|secret[ _-]?key|seed|secret|key)"
    r"(?![a-z])"
)
_SETUP_REACH = 40
# Ungrouped, a base32 run is a setup key only after a word that names a second factor itself.
_SECOND_FACTOR_WORD = re.compile(r"(?i)(?<![a-z0-9])(?:2fa|mfa|totp|otp|two[ -]factor|authenticator|setup[ _-]?key)(?![a-z])")
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z2-7]{16,64}|[a-z2-7]{16,64})(?![A-Za-z0-9])")
# Either case, as one app prints upper and another lower; the groups hold base32's digits 2-7.
_GROUPED_BASE32 = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z2-7]{4}(?: [A-Z2-7]{4}){3,15}|[a-z2-7]{4}(?: [a-z2-7]{4}){3,15})"
                             r"(?![A-Za-z0-9])")
# The label, and a few words before its colon ("backup codes somewhere safe:", "backup codes - keep
# them safe:") or "are".
# A word may qualify the codes ("backup verification codes"), the label may name the file they were
# saved in (``github-recovery-codes.txt``), and the account they are for may stand on a line of its
# own before them. A key's "ID" names it (BitLocker's recovery key ID is a GUID printed beside it).
_CODES_LABEL = re.compile(
    r"(?i)(?<![a-z])(?:recovery|backup|scratch|emergency|one[ -]time|2fa|mfa)(?:[ \t]+[a-z][a-z-]{2,14}[a-z])?[ \t-]+(?:codes?|keys?)"
    r"(?![a-z])(?:\.txt)?"
    r"(?:[ \t]+(?:are|is)(?![a-z])|(?:[ \t]*[-,])?(?:[ \t]+(?!id(?![a-z])|identifier)[a-z0-9]{1,15}){1,3}?(?=[ \t]*:))?"
    r"[ \t]*(?:\([^()\n]{0,40}\))?[ \t]*[:=-]?\s{0,4}(?:[\w.+-]{1,64}@[\w.-]{1,64}[ \t]*(?:\r?\n[ \t]*){1,2})?"
    # A code fence around them, as an assistant formats them for printing.
    r"(?:```[\w-]*[ \t]*\r?\n[ \t]*)?"
)
# A one-time code that an SMS or an e-mail puts first ("G-482913 is your Google verification code").
_CODE_FIRST = re.compile(
    r"(?<![\w-])(?P<code>(?:[A-Z]{1,3}-)?\d{4,8})[ \t]+(?i:is[ \t]+your)(?:[ \t]+[\w-]{1,20}){0,4}?"
    r"[ \t]+(?i:code|otp|pin|passcode)(?![\w])"
)
_CODE = re.compile(
    r"(?:(?:\d{1,2}[.)]|[-*\u2022])[ \t]+)?"
    r"(?P<code>\d{3,5} \d{3,5}(?![ \d])|(?=[A-Za-z0-9-]{0,80}\d)[A-Za-z0-9]{4,16}(?:-[A-Za-z0-9]{3,16}){0,7}"
    # A service's single recovery code, one long run (Bitwarden's 32 characters of base32).
    r"|(?=[A-Za-z]{0,63}\d)(?=[a-z0-9]{20,64}(?![\w-])|[A-Z0-9]{20,64}(?![\w-]))[A-Za-z0-9]{20,64})"
    r"(?![\w-])[ \t]*[,;]?[ \t]*(?:\r?\n[ \t]*)?"
)
_CODE_DIGITS = re.compile(r"\d{3}[ -]?\d")
_A_DIGIT = re.compile(r"\d")
# A bank's transaction number (``TAN``, ``mTAN``, ``pushTAN``), in capitals as banks write it: the
# lower-case word is a colour or a tangent.
_TAN = re.compile(
    r"(?<![A-Za-z])(?:m|sms|push|chip|photo|i)?TAN(?![A-Za-z])(?:[ \t]+(?i:for|für|zur)(?:[ \t]+[\w-]{1,20}){1,3}?)?"
    r"(?:[ \t]*:|[ \t]+(?i:is|ist|lautet))[ \t]*(?P<code>\d{6,8})(?!\d)"
)
# A code told as having been sent ("the code they texted me is 482913"): sent, it is a one-time code.
_SENT_CODE = re.compile(
    r"(?<![\w-])(?i:code|pin)(?:[ \t]+(?:that|which|they|you|he|she|we|it|the|my|bank|app|[A-Z]\w{1,20})){0,3}"
    r"[ \t]+(?i:texted|sent|emailed|messaged|sms'?e?d)(?:[ \t]+(?i:me|us|you|him|her|them|to[ \t]+me|over|just[ \t]+now)){0,2}"
    r"[ \t]+(?i:is|was)[ \t]*:?[ \t]*(?P<code>\d{4,8})(?!\d)"
)
# A code a message hands its reader to use ("Use 739201 to verify your account", "Enter 739201 on the
# sign-in page"), or gives as theirs ("Your Uber code: 7392", "your code is 739201").
_CODE_TO_USE = re.compile(
    r"(?<![\w-])(?i:use|enter|type|input)[ \t]+(?P<code>\d{4,8}|\d{3} \d{3})(?![\w-])[ \t]+(?i:to|on|at|in|as|for)(?:[ \t]+[\w'-]{1,20}){0,4}?"
    r"[ \t]+(?i:verify|verification|confirm|sign(?:ing)?[ -]?in|log(?:ging)?[ -]?in|login|authenticate|authentication|2fa|activate"
    r"|reset|code)"
    r"(?![\w])"
)
# An e-mail sets the code in bold or the like (``<strong>…</strong>``, Markdown's ``**…**``).
_EMPHASIS_OPENS = r"(?:<(?i:strong|b|em|code|mark|span)(?:[ \t][^<>\n]{0,80})?>|\*\*|__)?"
_EMPHASIS_CLOSES = r"(?:</(?i:strong|b|em|code|mark|span)>|\*\*|__)?"
_YOUR_CODE = re.compile(
    r"(?<![\w-])(?i:your)(?:[ \t]+(?P<what>[\w-]{1,20})){0,2}?[ \t]+(?i:code|otp|passcode)(?:[ \t]*:|[ \t]+(?i:is))[ \t]*"
    + _EMPHASIS_OPENS + r"(?P<code>\d{4,8})" + _EMPHASIS_CLOSES + r"(?![\w-])"
)
# A code of capitals and digits under the name of a sign-in check ("Steam Guard code: 7K2QX",
# "verification code is F4K9PQ"): one app's one-time codes are digits, another's letters too. A
# booking's or a door's code goes by another name ("confirmation code", "access code").
_CHECK_CODE = re.compile(
    r"(?<![\w-])(?i:verification|security|log[ -]?in|sign[ -]?in|authentication|auth|guard|authenticator|one[ -]time"
    r"|2fa|mfa|otp)[ \t]+(?i:code|passcode)(?:[ \t]*:|[ \t]+(?i:is|was))[ \t]*" + _EMPHASIS_OPENS +
    r"(?P<code>(?=[A-Z0-9]{0,9}\d)(?=[A-Z0-9]{0,9}[A-Z])[A-Z0-9]{4,10})" + _EMPHASIS_CLOSES + r"(?![\w-])"
)
# A one-time code under its name in other languages, in the words banks' and apps' messages use;
# the code is the first digits within a few words after it ("Ihr Bestätigungscode lautet 552 817",
# "Tu código de verificación de BBVA es 830192", "验证码 662915", "인증번호 [738201]"). A
# confirmation code goes unnamed here: a booking's is one too.
_CODE_ABROAD = re.compile(
    r"(?:(?i:best[äa]tigungs-?code|verifizierungs-?code|sicherheits-?code|einmal-?code|anmelde-?code"
    r"|c[óo]digo[ \t]+de[ \t]+(?:verificaci[óo]n|verifica[çc][ãa]o|seguridad|seguran[çc]a|acesso|acceso)"
    r"|clave[ \t]+de[ \t]+un[ \t]+solo[ \t]+uso|código[ \t]+de[ \t]+un[ \t]+solo[ \t]+uso"
    r"|code[ \t]+(?:de[ \t]+v[ée]rification|de[ \t]+s[ée]curit[ée]|[àa][ \t]+usage[ \t]+unique)"
    r"|codice[ \t]+(?:di[ \t]+verifica|di[ \t]+sicurezza|otp)|do[ğg]rulama[ \t]+kod|g[üu]venlik[ \t]+kod"
    r"|verificatiecode|beveiligingscode|kod[ \t]+(?:weryfikacyjny|jednorazowy|sms)"
    r"|код[ \t]+(?:подтверждения|проверки|из[ \t]+смс)|одноразовый[ \t]+код)"
    r"|رمز[ \t]+(?:التحقق|التأكيد)|كود[ \t]+التحقق|验证码|校验码|動態碼|动态码|認証コード|認証番号|確認コード|인증[ \t]?(?:번호|코드))"
    r"[^\d\n]{0,25}?(?<!\d)(?P<code>\d{3}[ -]\d{3}|\d{4,8})(?![\d-]|[ .]\d)"
)
# A code that unlocks a phone, lets one in or disarms an alarm, named in Spanish, Portuguese,
# Italian or German, with what it unlocks between ("codice di sblocco del telefono: …"); as the
# English names are, a door's or a gate's code is not one of them.
_SECRET_CODE_ABROAD = re.compile(
    r"(?i:(?<![a-z])(?:c[óo]digo|codice)[ \t]+(?:(?:de|di|da|do|dell?)[ \t]+|d')?"
    r"(?:desbloqueo|desbloqueio|sblocco|acceso|acesso|accesso|alarma|alarme|allarme)"
    r"|(?<![a-z])(?:entsperr|zugangs|alarm(?:anlagen)?)-?code)"
    r"(?:[ \t]+(?i:del|de|di|da|do|des|der|für|vom|von)(?:[ \t]+[^\W\d_]{1,20}){1,3}?"
    r"|[ \t]+(?i:dell|dall|d)'[^\W\d_]{1,20}(?:[ \t]+[^\W\d_]{1,20}){0,2}?)?"
    r"[ \t]*(?::|=|[ \t]+(?i:es|è|é|ist|lautet|est|is))[ \t]*(?<!\d)(?P<code>\d{4,12})(?!\d)"
)
# What the names above start with in ASCII, read in lower case before the patterns are.
_ABROAD_STEMS = ("digo de", "code de", "code a", "codice", "kod", "clave de un", "prufnummer", "cryptogram", "bestatigung",
                 "verifizierung", "sicherheits", "einmal", "anmelde", "dogrulama", "guvenlik", "verificatie",
                 "beveiliging", "veiligheid", "digo d", "entsperr", "zugangs", "alarm")
_THREE_DIGITS = re.compile(r"\d{3}")
# Six digits a few words after a second factor's name ("MFA: 483920", "Authenticator says 483920",
# "the code from Google Authenticator right now is 483 920"): what an authenticator shows.
_FACTOR_CODE = re.compile(r"[^\d\n]{0,40}?(?<![\d.,:/-])(?P<code>\d{6}|\d{3} \d{3})(?![\d.,:/-]|[ ]\d)")
# A card's security code under its name in other languages ("cryptogramme 412", "Prüfnummer 903",
# "código de seguridad 556", "セキュリティコード 271"), as "CVV" is read.
_CARD_CODE_ABROAD = re.compile(
    r"(?:(?i:cryptogramme(?:[ \t]+visuel)?|(?:karten)?pr[üu]f(?:nummer|ziffer|zahl|code)|c[óo]digo[ \t]+de[ \t]+(?:seguridad|seguran[çc]a)"
    r"|codice[ \t]+di[ \t]+sicurezza|veiligheidscode|kod[ \t]+zabezpieczaj[ąa]cy)|セキュリティコード|보안[ \t]?코드|安全码|安全碼)"
    r"[^\d\n]{0,12}?(?<!\d)(?P<code>\d{3,4})(?!\d)"
)
_MOST_CODES = 32


# A safe's combination guards valuables as a PIN does (a lock's, like a door's code, is household
# knowledge and kept): named before the safe ("the combination to the wall safe is …") or after it
# ("Safe in the study: combination …"), its numbers in groups or in one run.
_SAFE_COMBINATION = re.compile(
    r"(?i:(?<![a-z])(?:(?:safe|tresor|gun[ \t]+cabinet)(?![a-z])[^\n.;]{0,30}?(?:combination|combo|kombination)"
    r"|(?:combination|combo)[ \t]+(?:to|for|of|on)[ \t]+(?:(?:the|my|our|your|his|her|their)[ \t]+)?(?:[\w-]+[ \t]+){0,2}?"
    # Where the safe stands may come between ("the gun safe in the basement is …").
    r"(?:safe|tresor)(?![a-z])(?:[ \t]+(?:in|at|on|under|behind|upstairs|downstairs)(?:[ \t]+[\w'-]{1,20}){1,5}?(?=[ \t]+(?:is|was|=|:)))?))"
    r"[^\d\n]{0,16}?(?<!\d)"
    r"(?P<code>\d{1,3}(?:[ \t]*[-/,.][ \t]*\d{1,3}){2,5}|\d{1,3}(?:[ \t]+\d{1,3}){2,5}|\d{3,8})(?!\d)"
)


def one_time_codes(text: str) -> Iterator[Hit]:
    for match in _BITLOCKER.finditer(text):
        yield Hit(match.start(), match.end(), RECOVERY_CODE)
    for match in _GROUPED_BASE32.finditer(text):
        # A random key of sixteen often holds a single digit: one is enough after a word that names
        # a second factor itself, two after "key" or "secret".
        digits, before = sum(c in "234567" for c in match.group(0)), max(0, match.start() - _SETUP_REACH)
        if (digits >= 2 and _SETUP_WORD.search(text, before, match.start())) \
                or (digits == 1 and _SECOND_FACTOR_WORD.search(text, before, match.start())):
            yield Hit(match.start(), match.end(), TOTP_SECRET)
    for word in _SECOND_FACTOR_WORD.finditer(text):
        run = _BASE32_RUN.search(text, word.end(), word.end() + _SETUP_REACH)
        if run is not None and sum(c in "234567" for c in run.group(0)) >= 2 and sum(c.isalpha() for c in run.group(0)) >= 4:
            yield Hit(run.start(), run.end(), TOTP_SECRET)
    if _CODE_DIGITS.search(text):  # far cheaper than looking for the whole shape in text without one
        for match in _CODE_FIRST.finditer(text):
            yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
        if "TAN" in text:
            for match in _TAN.finditer(text):
                yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
        for match in _CODE_TO_USE.finditer(text):
            yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
        for match in _YOUR_CODE.finditer(text):
            if (match.group("what") or "").lower() not in NOT_SECRET_CODES:
                yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
        for match in _SENT_CODE.finditer(text):
            if not names_no_secret_code(text, match.start()):
                yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
    lowered = text.lower()  # one pass in C spares most text the patterns' scans
    digits = _THREE_DIGITS.search(text) is not None
    if digits and (not text.isascii() or any(stem in lowered for stem in _ABROAD_STEMS)):
        for match in _CODE_ABROAD.finditer(text):
            yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
        for match in _CARD_CODE_ABROAD.finditer(text):
            yield Hit(match.start("code"), match.end("code"), CARD_CODE)
        for match in _SECRET_CODE_ABROAD.finditer(text):
            yield Hit(match.start("code"), match.end("code"), PASSWORD)
    if ("combination" in lowered or "combo" in lowered or "kombination" in lowered) and _A_DIGIT.search(text):
        for match in _SAFE_COMBINATION.finditer(text):
            yield Hit(match.start("code"), match.end("code"), PASSWORD)
    if "code" in lowered:
        for match in _CHECK_CODE.finditer(text):
            yield Hit(match.start("code"), match.end("code"), ONE_TIME_CODE)
    if digits:
        for word in _SECOND_FACTOR_WORD.finditer(text):
            code = _FACTOR_CODE.match(text, word.end())
            if code is not None:
                yield Hit(code.start("code"), code.end("code"), ONE_TIME_CODE)
    for label in _CODES_LABEL.finditer(text):
        position = label.end()
        for _ in range(_MOST_CODES):
            code = _CODE.match(text, position)
            if code is None or code.end() == position:
                break
            yield Hit(code.start("code"), code.end("code"), RECOVERY_CODE)
            position = code.end()

"""Keys and tokens recognisable without a label: the shapes vendors give their credentials (a
documented prefix, then a random run of a documented length and alphabet). A shape only counts
when its random part reads as random: ``sk-onboarding-checklist``, ``ghp_xxxx…`` and the
documentation's ``…EXAMPLE`` keys keep their text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.core.redaction.labels import PASSWORD
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import documented_example, masked, placeholder, shannon

API_KEY = "api_key"
TOKEN = "token"

_B64 = "A-Za-z0-9+/="
_URL64 = r"A-Za-z0-9_\-"

# Each family once, as its documentation describes it; grouped by the kind the breadcrumb names.
_KEYS = (
    # memvault's own memory keys and brain credentials (``core/credentials/keys.py``): 32 random bytes, URL-safe.
    r"(?:mk|bt)_[" + _URL64 + r"]{43}(?![" + _URL64 + r"])",
    r"sk-ant-(?:api|admin|oat|ort|sid)\d\d-[" + _URL64 + r"]{20,}",
    r"sk-(?:proj|svcacct|admin|None|or-v1|lf)-[" + _URL64 + r"]{16,}",
    r"(?:sk|pk)-[" + _URL64 + r"]{16,}",
    # Stripe's publishable keys (``pk_live_``) are public by design: they ship in every web page.
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"sk_[a-f0-9]{32,}",
    r"whsec_[A-Za-z0-9+/]{16,}",
    r"gh[pousr]_[A-Za-z0-9_]{30,}(?:[.-][" + _URL64 + r".]+)?",
    r"github_pat_[A-Za-z0-9_]{30,}",
    r"gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat|ffct|wt|rtr)-[" + _URL64 + r".]{20,}",
    r"GR1348941[" + _URL64 + r"]{20,}",
    r"xox[abeoprs]-[A-Za-z0-9-]{10,}",
    r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9-]{20,}",
    r"xapp-\d-[A-Za-z0-9-]{20,}",
    r"AIza[" + _URL64 + r"]{35}",
    r"GOCSPX-[" + _URL64 + r"]{20,}",
    r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}",
    r"SG\.[" + _URL64 + r"]{16,32}\.[" + _URL64 + r"]{30,50}",
    r"key-[0-9a-f]{32}",
    r"[0-9a-f]{32}-(?:[0-9a-f]{8}-[0-9a-f]{8}|us\d{1,2})(?![A-Za-z0-9])",
    r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])",
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    r"dckr_(?:pat|oat)_[" + _URL64 + r"]{20,}",
    r"AT(?:ATT|CTT)[" + _URL64 + r"=]{50,}",
    r"ATBB[A-Za-z0-9]{28,}",
    r"npm_[A-Za-z0-9]{30,}",
    r"pypi-Ag[" + _URL64 + r"]{50,}",
    r"(?:hf|api_org)_[A-Za-z0-9]{30,}",
    r"do[opr]_v1_[a-f0-9]{64}",
    r"HRKU-[" + _URL64 + r"]{20,}",
    r"cf(?:k|ut|at)_[A-Za-z0-9]{40,}",
    r"lin_api_[A-Za-z0-9]{30,}",
    r"(?:ntn|secret)_[A-Za-z0-9]{40,}",
    r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
    r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    r"figd_[" + _URL64 + r"]{30,}",
    r"sntry[su]_[" + _B64 + r"_-]{30,}",
    r"gl(?:c|sa)_[" + _B64 + r"_-]{30,}",
    r"NR(?:AK|II|JS)-[A-Za-z0-9]{20,}",
    r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9._-]{40,}",
    r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{30,}",
    r"sbp_[a-f0-9]{40}|sb_secret_[" + _URL64 + r"]{20,}",
    r"gsk_[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|(?:pplx|xai|csk)-[A-Za-z0-9]{40,}|pcsk_[A-Za-z0-9_]{50,}",
    r"EAA[A-Za-z0-9]{80,}|sq0(?:atp|csp)-[" + _URL64 + r"]{22,}|EAAA[" + _URL64 + r"]{60}(?![" + _URL64 + r"])",
    r"access_token\$production\$[a-z0-9]{16}\$[a-f0-9]{32}",
    r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}(?:-[A-Z0-9]{5}){4}",
    r"dapi[a-f0-9]{32}(?:-\d)?|rubygems_[a-f0-9]{48}|oy2[A-Za-z0-9]{43}|CLOJARS_[a-f0-9]{60}",
    r"LTAI[A-Za-z0-9]{12,20}|AKID[A-Za-z0-9]{32}",
    r"CFPAT-[" + _URL64 + r"]{40,}|tfp_[" + _URL64 + r"]{40,}|re_[A-Za-z0-9]{8,}_[A-Za-z0-9]{16,}",
    r"nfp_[A-Za-z0-9]{36,}|fo1_[" + _URL64 + r"]{40,}|rnd_[A-Za-z0-9]{30,}|pul-[a-f0-9]{40}",
    r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|mlsn\.[a-f0-9]{64}",
    r"shippo_(?:live|test)_[a-f0-9]{40}|EZ[AT]K[A-Za-z0-9]{54}|FLWSECK(?:_TEST)?-[a-f0-9]{32}-X",
    # Fireworks (24 characters, a digit among them: ``fw_`` also starts firmware's names), Buildkite,
    # CircleCI's personal and project tokens, Lob's keys (35 hex characters).
    r"fw_(?=[A-Za-z]{0,23}[0-9])[A-Za-z0-9]{24}(?![A-Za-z0-9])|bkua_[a-f0-9]{40}|CCIP(?:AT|RJ)_[A-Za-z0-9]{16,}_[a-f0-9]{40}|(?:live|test)_[a-f0-9]{35}(?![A-Za-z0-9])",
    # Asana's personal access tokens: a version, the user's and the app's ids, then 32 hex characters.
    r"[12]/\d{10,20}(?:/\d{10,20})?:[a-f0-9]{32}(?![A-Za-z0-9])",
    # Firebase's legacy server keys: an id, then ``APA91b`` and a long run.
    r"AAAA[" + _URL64 + r"]{7}:APA91b[" + _URL64 + r"]{100,}",
    r"AKCp[A-Za-z0-9]{60,}|cmVmdGtuOj[A-Za-z0-9]{40,}",
    r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}|sq[upa]_[a-f0-9]{40}|pnu_[A-Za-z0-9]{36}",
    r"(?:api|sdk|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
)
_TOKENS = (
    # Wrapped at its dots, each dot ending its line or starting the next.
    r"eyJ[" + _URL64 + r"]{8,}(?:\r?\n[ \t]*)?\.(?:\r?\n[ \t]*)?ey[" + _URL64 + r"]{8,}(?:\r?\n[ \t]*)?\.(?:\r?\n[ \t]*)?["
    + _URL64 + r"]*",
    # A JWS's payload need not be JSON: a JSON header and two long segments after it.
    r"eyJ[" + _URL64 + r"]{8,}\.[" + _URL64 + r"]{20,}\.[" + _URL64 + r"]{20,}",
    r"ya29\.[" + _URL64 + r"]{20,}",
    r"1//0[" + _URL64 + r"]{30,}",
    r"4/0A[" + _URL64 + r"]{30,}",
    r"(?:FwoGZXIvYXdzE|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{40,}",
    r"[MNO][" + _URL64 + r"]{23,27}\.[" + _URL64 + r"]{6}\.[" + _URL64 + r"]{27,40}",
    r"\d{6,12}:[" + _URL64 + r"]{35}(?![" + _URL64 + r"])",
    r"hv[sbr]\.[" + _URL64 + r"]{20,}|s\.[A-Za-z0-9]{24}(?![A-Za-z0-9])|b\.AAAAAQ[" + _URL64 + r"]{40,}",
    r"[A-Za-z0-9]{14}\.atlasv1\.[" + _URL64 + r"=]{60,}",
    # Mapbox's secret tokens: a short user name makes a short first part.
    r"sk\.eyJ[" + _URL64 + r"]{30,}\.[" + _URL64 + r"]{20,}|sk\.eyJ[" + _URL64 + r"]{50,}|ops_eyJ[" + _B64 + r"_-]{50,}",
    r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}",
    r"y0_[" + _URL64 + r"]{50,}",
    r"sl\.(?:[A-Za-z]\.)?[" + _URL64 + r"]{100,}",
    r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
    r"fm[12][ar]?_[" + _B64 + r"]{40,}",
    r"oauth:[A-Za-z0-9]{30}(?![A-Za-z0-9])|(?i:nsec1[02-9ac-hj-np-z]{58})(?![A-Za-z0-9])",
    # Matrix's access tokens; Okta's API tokens under their own scheme (``SSWS 00…``).
    r"syt_[" + _URL64 + r"]{4,}_[A-Za-z0-9]{20}_[A-Za-z0-9]{6}(?![A-Za-z0-9])|SSWS[ \t]+00[" + _URL64 + r"]{38,}",
    # A SAML response or assertion in base64 (``<samlp:Response``, ``<saml:Assertion`` and the
    # ``saml2`` forms): signed, it signs in whoever presents it.
    r"PHNhbW(?:xwOlJlc3BvbnNl|wycDpSZXNwb25zZ|w6QXNzZXJ0aW9u|wyOkFzc2VydGlvb)[A-Za-z0-9+/=]{100,}",
    # Password hashes in crypt's modular format (htpasswd, /etc/shadow, app databases): crackable
    # offline, so kept out like the password itself.
    r"\$(?:apr1|1|5|6|2[abxy]|y|gy|7|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?)\$[A-Za-z0-9./$=,+-]{20,}",
    # And the hashes Windows domains hand out as crackers take them: a cached domain logon
    # (``$DCC2$10240#user#…``), a Kerberos service ticket or AS-REP roasted (``$krb5tgs$23$*…``).
    r"\$DCC2?\$(?:\d{1,6}#)?[^#\s]{1,64}#[0-9a-fA-F]{32}|\$krb5(?:tgs|asrep|pa)\$\d{1,2}\$[^\s]{40,}",
)
# Windows' password hashes as dumping tools print them, as crackable as a crypt hash and usable
# as they are (pass-the-hash): the NT hash of a ``user:RID:LM:NT:::`` line, and a captured
# NetNTLM response (``user::DOMAIN:challenge:proof:blob``). And a hash a cracker printed with the
# password it found (``<md5>:Summer#2026``, a potfile's line), where the password is what is left.
_NT_HASH = re.compile(r"(?<![^\s\"'])[^:\s]{1,64}:\d{1,10}:[0-9a-fA-F]{32}:(?P<hash>[0-9a-fA-F]{32}):::")
# An NT hash under its own name, as mimikatz prints it (``* NTLM : …``) or a note gives it.
_NT_HASH_LABELLED = re.compile(r"(?<![A-Za-z])(?:NTLM|NT[ _-]?(?i:hash))[ \t]*[:=][ \t]*(?P<hash>[0-9a-fA-F]{32})(?![0-9A-Za-z])")
_NET_NTLM = re.compile(r"(?<![^\s\"'])[^:\s]{1,64}::[^:\s]{1,64}:[0-9a-fA-F]{16}:(?P<hash>[0-9a-fA-F]{32,48}:[0-9a-fA-F]{32,4096})")
# The password holds a digit or a symbol, and no dot or slash: git names a file at a commit as
# ``<sha>:Makefile`` or ``<sha>:src/app.py``.
_CRACKED = re.compile(r"(?m)^[ \t]*(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40}|[0-9a-fA-F]{32}):"
                      r"(?P<plain>(?=[^\s:/.]{0,63}[\d!-\-@#$%^&*?~])[^\s:/.]{4,64})[ \t]*$")
_HEX_OR_DIGITS = re.compile(r"[0-9a-fA-F]+|\d+")
_START = r"(?<![A-Za-z0-9_])"
_KEY_SHAPES = re.compile(_START + r"(?:" + "|".join(_KEYS) + r")")
_TOKEN_SHAPES = re.compile(_START + r"(?:" + "|".join(_TOKENS) + r")")
# Webhook URLs (Slack's, Discord's, Teams', Zapier's), and the Telegram Bot API's (``/bot<token>/sendMessage``), carry their secret in the path.
_WEBHOOKS = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/]{20,})"
    r"|discord(?:app)?\.com/api/webhooks/\d+/(?P<discord>[" + _URL64 + r"]{40,})"
    r"|webhook\.office\.com/webhookb2/(?P<teams>[A-Za-z0-9@/_-]{40,})"
    r"|/bot(?P<telegram>\d{6,12}:[" + _URL64 + r"]{35})(?![" + _URL64 + r"])"
    r"|hooks\.zapier\.com/hooks/catch/\d+/(?P<zapier>[A-Za-z0-9]{6,40})(?![A-Za-z0-9])"
    # Any other service's incoming webhook (Mattermost's, Rocket.Chat's, a CI's): a random path
    # segment after ``hooks`` is the secret that lets anyone post.
    r"|/(?:hooks|webhooks?)/(?P<hook>[A-Za-z0-9_-]{20,80})(?![A-Za-z0-9_-])"
    # A link that lets whoever holds it in (an invitation, a password reset, a magic sign-in) carries
    # its token as the path segment after the word.
    r"|/(?i:invite|invites|invitation|invitations|shared_invite|join|accept|reset|reset-password|password-reset|"
    r"magic|magic-link|login|signin|verify|confirm|activate)/(?P<link>[A-Za-z0-9_-]{20,200})(?![A-Za-z0-9_-])"
    # The code an OAuth provider sends back to the app, which the app trades for a token.
    r"|[?&#]code=(?P<code>[A-Za-z0-9_~.+/-]{20,512})(?![A-Za-z0-9_~.+/-])"
    # OpenWeather's API key, 32 hex digits, is its query's ``appid`` (an app's id elsewhere is public).
    r"|[?&]appid=(?P<appid>[0-9a-f]{32})(?![0-9A-Za-z])"
)
_PARTS = re.compile(r"[A-Za-z0-9]+")
# String literals and what joins two of them in code: a ``+`` or, inside brackets, only space.
_STRING_LITERAL = re.compile(r"(?P<quote>[\"'])(?P<content>[A-Za-z0-9_+/=.-]{1,300})(?P=quote)")
_JOIN = r"[ \t]*(?:\+|\.)?[ \t]*(?:\\?\r?\n[ \t]*(?:\+|\.)?[ \t]*)?"
_LITERAL_JOIN = re.compile(_JOIN)
_JOINED_LITERALS = re.compile(r"[\"']" + _JOIN + r"[\"']")
_AWS_PAIR = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])[ \t]*(?:[,:;|/]|\t)?[ \t]*"
                       r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_SPACED_OUT = re.compile(r"(?<![^\s\"'`])(?:[!-~] ){19,299}[!-~](?![^\s\"'`])")


def random_enough(token: str) -> bool:
    """Some stretch of 8 or more letters and digits mixes two of lower case, upper case and digits,
    each at least twice (or is a long varied upper-case run); and the token is no mask or
    documented example."""
    if masked(token) or documented_example(token):
        return False
    for part in _PARTS.findall(token):
        if len(part) >= 8:
            counts = (sum(c.islower() for c in part), sum(c.isupper() for c in part), sum(c.isdigit() for c in part))
            if sum(n >= 2 for n in counts) >= 2:
                return True
            # One class only: upper case and digits (an AWS key id's base32) if long and varied, never words.
            if len(part) >= 16 and not counts[0] and shannon(part) >= 3.0:
                return True
    return False


def _shaped(token: str) -> bool:
    # Slack's tokens are dash-separated numbers and words: their digits, not their mix, mark them.
    if token.startswith(("xox", "xapp")):
        return sum(c.isdigit() for c in token) >= 4 and not masked(token) and not documented_example(token)
    return random_enough(token)


def _concatenated(text: str) -> Iterator[Hit]:
    """A token cut into string literals that code joins (``"sk-" + "proj-…" + "…"``, Python's
    ``("xoxb-…" "…")`` over lines), to slip past a scanner that reads each literal alone: the
    literals of one chain are read joined, and each part of a token found so goes."""
    chain: list[re.Match[str]] = []
    for literal in (*_STRING_LITERAL.finditer(text), None):
        if literal is not None and chain and _LITERAL_JOIN.fullmatch(text, chain[-1].end(), literal.start()):
            chain.append(literal)
            continue
        if len(chain) > 1:
            yield from _tokens_across(chain)
        chain = [] if literal is None else [literal]


def _tokens_across(chain: list[re.Match[str]]) -> Iterator[Hit]:
    joined = "".join(part.group("content") for part in chain)
    offsets = [0]
    for part in chain:
        offsets.append(offsets[-1] + len(part.group("content")))
    for found in _shaped_tokens(joined):
        for index, part in enumerate(chain):
            low, high = max(found.start, offsets[index]), min(found.end, offsets[index + 1])
            if low < high:
                start = part.start("content") + low - offsets[index]
                yield Hit(start, start + high - low, found.kind)


def _shaped_tokens(text: str) -> Iterator[Hit]:
    """The vendors' keys and tokens found by their shape in ``text``."""
    for pattern, kind in ((_KEY_SHAPES, API_KEY), (_TOKEN_SHAPES, TOKEN)):
        for match in pattern.finditer(text):
            if _shaped(match.group(0)):
                yield Hit(match.start(), match.end(), kind)


def vendor_tokens(text: str) -> Iterator[Hit]:
    yield from _shaped_tokens(text)
    if "AKIA" in text or "ASIA" in text:
        for pair in _AWS_PAIR.finditer(text):
            # An access key's id and its secret given side by side, with no label for the second.
            if random_enough(pair.group("secret")):
                yield Hit(pair.start("secret"), pair.end("secret"), API_KEY)
    if ("\"" in text or "'" in text) and _JOINED_LITERALS.search(text):
        yield from _concatenated(text)
    for spaced in _SPACED_OUT.finditer(text):
        # A token printed a character at a time (``sed 's/./& /g'``, to slip past a log's mask).
        joined = spaced.group(0).replace(" ", "")
        whole = next((hit for hit in _shaped_tokens(joined) if hit.start == 0 and hit.end >= len(joined) - 1), None)
        if whole is not None:
            yield Hit(spaced.start(), spaced.end(), whole.kind)
    for match in _WEBHOOKS.finditer(text):
        group = next(name for name in ("secret", "discord", "teams", "telegram", "zapier", "hook", "link", "code", "appid")
                     if match.group(name) is not None)
        # Zapier's catch hooks end in a short run: its place in the URL, not its mix, marks it.
        if group == "zapier" or random_enough(match.group(group)):
            yield Hit(match.start(group), match.end(group), TOKEN)
    if ":::" in text:
        for match in _NT_HASH.finditer(text):
            yield Hit(match.start("hash"), match.end("hash"), TOKEN)
    if "NT" in text:
        for match in _NT_HASH_LABELLED.finditer(text):
            yield Hit(match.start("hash"), match.end("hash"), TOKEN)
    if "::" in text:
        for match in _NET_NTLM.finditer(text):
            yield Hit(match.start("hash"), match.end("hash"), TOKEN)
    for match in _CRACKED.finditer(text) if ":" in text else ():
        if not _HEX_OR_DIGITS.fullmatch(plain := match.group("plain")) and not placeholder(plain):
            yield Hit(match.start("plain"), match.end("plain"), PASSWORD)

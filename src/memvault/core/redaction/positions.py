"""Secrets that their place gives away though no ``key=value`` label names them: HTTP
authorization headers and schemes (``Authorization: Bearer …``, ``Basic …``, ``token …``),
command lines (``curl -u user:pass``, ``--password pass``, ``mysql -pPASS``, ``sshpass -p``,
``redis-cli -a``, ``docker login -p``, ``htpasswd -b``, ``openssl … pass:``, ``net user``, ``chpasswd``),
session cookies (``Cookie: sessionid=…``, ``connect.sid=…`` after the word cookie or curl's ``-b``, a
HAR file's ``{"name": …, "value": …}``), a value piped into a command that stores it as a secret,
``.netrc`` entries (``machine … login … password …``),
``.pgpass`` lines (``host:port:database:user:password``), the lines of an OpenVPN ``auth-user-pass``
file, a Wi-Fi QR code's ``P:`` field, the line a mail client answers an SMTP server's password
prompt with, and a
database driver's connect call with the password as a positional argument."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from memvault.core.redaction.labels import API_KEY, PASSWORD, STRONG, TOKEN, kind_of, label_strength, value_is_secret
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import classes, code, generated, placeholder, prose, random_token

_AUTHORIZATION = re.compile(
    r"(?i:(?<![\w-])(?:proxy-)?authorization)\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"(?:(?P<scheme>[A-Za-z][\w-]{0,30})[ \t]+)?(?P<value>[^\s\"',;\\|]{6,1024})"
)
_SCHEME = re.compile(r"(?<![\w-])(?P<scheme>(?i:bearer|token|bot|basic))[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{12,1024})")
_USER_PASS = re.compile(
    r"(?<!\S)(?:-u|--user|--proxy-user|--http-user|--auth|(?<=\bhttp[ \t])-a|(?<=\bhttps[ \t])-a|(?<=\bxh[ \t])-a)(?:[ \t]+|=)\\?[\"']?(?P<user>[^\s:\"']{0,100}):(?P<value>[^\s\"']{1,300})"
)
# A flag's argument never opens with ``=``: ``-token = …`` is a line a diff removes, not a flag.
# A modem's command that enters a SIM's PIN, or its PUK and a new PIN (``AT+CPIN="1234"``).
_SIM_PIN_COMMAND = re.compile(r"(?i:AT\+CPIN2?)=\\?\"?(?P<pin>\d{4,8})\\?\"?(?:,\\?\"?(?P<new>\d{4,8})\\?\"?)?(?![\d])")
_SECRET_REFERENCE = re.compile(r"(?:id|src|source|env|type|target)=[^\s,]*(?:,(?:id|src|source|env|type|target|required)=[^\s,]*)*$")
_LONG_FLAG = re.compile(r"(?<![\w-])--?(?P<label>[A-Za-z][\w-]{0,40})[ \t]+\\?[\"']?(?P<value>[^\s\"'=-][^\s\"']{0,300})")
_COMMAND_FLAG = re.compile(
    r"(?<![\w-])(?P<command>(?i:mysql\w*|mariadb\w*|sshpass|mongo\w*|docker[ \t]+login|podman[ \t]+login|"
    r"helm[ \t]+registry[ \t]+login|twine|redis-cli|mosquitto_(?:pub|sub|rr)|unzip|zip|7z|ldap\w+|sqlcmd|bcp|osql|"
    r"isql|az[ \t]+login))\b[^\n|;&]{0,300}?"
    r"(?<!\S)(?P<flag>-p|-a|-P|-w)(?P<gap>[ \t]+|=)?\\?[\"']?(?P<value>[^\s\"'-][^\s\"']{0,300})"
)
# The flags after the first on the same command line (``mosquitto_pub -p 1883 … -P pw``: its port first).
_MOST_FLAGS = 8
_LATER_FLAG = re.compile(r"[^\n|;&]{0,300}?(?<!\S)(?P<flag>-p|-a|-P|-w)(?P<gap>[ \t]+|=)?\\?[\"']?(?P<value>[^\s\"'-][^\s\"']{0,300})")
# An option named for a password run together (Java's keytool and jarsigner: ``-storepass``, ``-keypass``).
_PASS_OPTION = re.compile(r"(?i)(?<!by)(?<!com)(?<!sur)(?<!tres)(?<!over)(?<!under)pass\Z")
# A command's ``login`` given its token as the argument (``cargo login …``, ``wandb login …``).
_LOGIN_ARGUMENT = re.compile(r"(?<![\w-])[a-z][\w.-]{1,30}[ \t]+login[ \t]+(?P<value>[A-Za-z0-9_.~+/=-]{20,300})(?![^\s\"'`])")
_METAVARIABLE = re.compile(r"^[A-Z][A-Z_-]*$")
_ATTACHED_ONLY = ("mysql", "mariadb", "7z")  # `mysql -p db` prompts for the password and opens db
_FLAG_OF = {"redis-cli": "-a", "zip": "-P", "unzip": "-P", "mosquitto": "-P", "ldap": "-w", "sqlcmd": "-P", "bcp": "-P",
            "osql": "-P", "isql": "-P"}
# htpasswd's -b takes the password as its last argument: after the file and the user, or after
# the user alone when -n prints the line instead of writing a file.
_HTPASSWD = re.compile(r"(?<![\w-])htpasswd(?P<flags>(?:[ \t]+-[A-Za-z]{1,10}){1,6})(?P<args>(?:[ \t]+[^\s-]\S{0,300}){2,3})")
_PASS_ARGUMENT = re.compile(
    r"(?<![\w-])-(?:pass(?:in|out)?|passphrase)[ \t]+pass:(?P<value>[^\s\"']{1,300})"
    r"|(?<![\w-])(?i:net)[ \t]+(?i:user)[ \t]+[^\s/]{1,100}[ \t]+(?P<net>[^\s/*][^\s]{0,300})"
    r"|(?<![\w-])echo[ \t]+[\"']?[\w.@-]{1,100}:(?P<chpasswd>[^\s\"']{1,300})[\"']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd"
    r"|(?<![\w-])(?:echo|printf)[ \t]+(?:-n[ \t]+|(?P<format>[\"'])%s(?:\\n)?(?P=format)[ \t]+)?[\"']?(?P<stdin>[^\s\"'|]{1,300})[\"']?[ \t]*\|[^\n|]{0,200}(?:--password-stdin|sudo[ \t]+(?:-\w+[ \t]+)*-S\b|passwd[ \t]+--stdin"
    # A command that stores what it reads as a secret (``wrangler secret put``, ``gh secret set``,
    # ``fly secrets set``, ``vercel env add``, ``firebase functions:secrets:set``).
    r"|(?<![\w-])secrets?(?::set|[ \t]+(?:put|set|add|create))\b|(?<![\w-])env[ \t]+add\b)"
)
# Rarer commands, each looked for only in text that holds a character or word it needs:
# ``net use Z: \\server\share /user:DOMAIN\name password`` (or the password before ``/user:``); Samba's ``-U user%password``
# (smbclient, rpcclient, smbmap); ``openssl passwd …``; PowerShell's ``ConvertTo-SecureString '…'
# -AsPlainText``; lftp's ``-u user,password``; Oracle's ``sqlplus user/password@service`` and its JDBC URL.
_RARE_ARGUMENTS = (
    (("/user:", "/USER:", "/u:"), re.compile(
        r"(?<![\w-])(?i:net)[ \t]+(?i:use)[ \t][^\n/]{0,200}/(?i:user|u):[^\s/]{1,100}[ \t]+(?P<value>[^\s/*][^\s]{0,300})")),
    # The password may come before ``/user:`` too, right after the share.
    (("/user:", "/USER:", "/u:"), re.compile(
        r"(?<![\w-])(?i:net)[ \t]+(?i:use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?\\\\[^\s/]{1,200}[ \t]+"
        r"(?P<value>[^\s/*][^\s]{0,300})[ \t]+/(?i:user|u):")),
    (("%",), re.compile(r"(?<!\S)(?:-U|--user(?:name)?)(?:[ \t]+|=)[\"']?[^\s%\"']{1,100}%(?P<value>[^\s\"']{1,300})")),
    (("passwd",), re.compile(
        r"(?<![\w-])openssl[ \t]+passwd(?:[ \t]+-(?:1|5|6|apr1|aixmd5|crypt|quiet|noverify|salt[ \t]+[^\s-]\S{0,63}))*"
        r"[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'$-][^\s\"']{0,300})(?P=q)(?![^\s)\"'])")),
    (("SecureString", "securestring"), re.compile(
        r"(?i:ConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?(?P<q>[\"'])(?P<value>[^\"'\n]{1,300})(?P=q)"
        r"(?=[^\n]{0,100}-AsPlainText)")),
    (("lftp",), re.compile(r"(?<![\w-])lftp\b[^\n|;&]{0,200}?(?<!\S)-u[ \t]+[\"']?[^\s,\"']{1,100},(?P<value>[^\s\"']{1,300})")),
    (("/",), re.compile(r"(?<![\w-])(?i:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)(?:[ \t]+-\w+){0,8}[ \t]+[\"']?[\w$#]{1,30}/"
                        r"(?P<value>[^\s@/\"']{1,300})(?=@|[\s\"']|\Z)")),
    # An expect script typing the password a prompt asked for (``expect "Password:"`` then ``send "…\\r"``).
    (("send",), re.compile(r"(?<![\w-])expect[ \t]+(?:-\w+[ \t]+)?\"[^\"\n]{0,60}(?i:pass(?:word|phrase)?|pin)[^\"\n]{0,20}\""
                           r"[ \t]*\r?\n[ \t]*send[ \t]+(?:--[ \t]+)?\"(?P<value>(?:[^\"\\\n]|\\(?![rn]\")[^\n]){1,300}?)(?:\\[rn])?\"")),
    # rclone's ``obscure`` takes the password to hide as its argument.
    (("obscure",), re.compile(r"(?<![\w-])rclone[ \t]+obscure[ \t]+(?P<q>[\"']?)(?P<value>[^\s\"'-][^\s\"']{0,300})(?P=q)(?![^\s>|;&])")),
    # SQL Server's procedures that take a password in a fixed place: a linked server's login (the
    # fifth argument) and ``sp_addlogin 'name', 'password'``.
    (("sp_add", "SP_ADD"), re.compile(
        r"(?i:sp_addlinkedsrvlogin)[ \t]+(?:(?:N?'[^'\n]{0,128}'|\w{1,30})[ \t]*,[ \t]*){4}N?'(?P<value>[^'\n]{1,300})'"
        r"|(?i:sp_addlogin)[ \t]+N?'[^'\n]{1,128}'[ \t]*,[ \t]*N?'(?P<login>[^'\n]{1,300})'")),
    # The same ``user/password@`` in a JDBC or OCI URL for Oracle (``jdbc:oracle:thin:scott/…@//host:1521/ORCL``).
    (("oracle:",), re.compile(r"(?i:oracle):(?i:thin|oci8?|kprb):[\w$#]{1,30}/(?P<value>[^\s@/\"']{1,300})@")),
)
# SQL's ``IDENTIFIED BY '…'`` (MySQL, Oracle), and Redis's ``AUTH [user] password`` at its prompt;
# rare words, looked for only in text that holds them.
# Oracle takes the password unquoted too (``identified by Tiger9``): then it must look made, since
# prose says "identified by name".
_IDENTIFIED_BY = re.compile(
    r"(?<![\w-])(?i:identified)[ \t]+(?i:(?:with[ \t]+\w+[ \t]+)?by)[ \t]+(?i:password[ \t]+)?(?:(?P<q>['\"])"
    r"(?P<value>[^'\"\n]{1,300})(?P=q)|(?P<bare>[A-Za-z][\w$#]{5,127})(?![\w$#]))"
)
_REDIS_AUTH = re.compile(r"(?m)(?:^|(?<=>))[ \t]*AUTH[ \t]+(?:[\w.-]{1,64}[ \t]+)?(?P<value>[^\s\"']{1,300})[ \t]*\r?$")
# A database driver given its password as a positional argument: PHP's mysqli and PDO, JDBC's
# DriverManager, Python's MySQLdb and pymysql (host or DSN, user, password).
_CONNECT_CALL = re.compile(
    r"(?<![\w.])(?:new[ \t]+)?(?:[\w.]*\.)?(?P<call>mysqli|mysqli_connect|mysql_connect|mysqli_real_connect|PDO|"
    r"getConnection|connect)[ \t]*\((?P<args>(?:[ \t]*(?:\$?[\w.]+|\"[^\"\n]{0,300}\"|'[^'\n]{0,300}')[ \t]*,){2})"
    r"[ \t]*(?P<quote>[\"'])(?P<value>[^\"'\n]{1,300})(?P=quote)"
)
# A login call given the user and then the password (``client.username_pw_set("esp32", "…")``,
# ``smtp.login(user, "…")``, ``auth=("user", "…")``, ``HTTPBasicAuth(…)``), and an SDK's client
# made with its key as the only argument (``cohere.Client("…")``).
# Ruby calls it without brackets (``req.basic_auth 'user', '…'``) or passes its scheme as a symbol
# first (Faraday's ``:basic, 'user', '…'``); Rust wraps the password (``basic_auth("u", Some("…"))``);
# an app password is four groups of four (``smtp.login(user, "abcd EFGH ijkl MNOP")``).
_LOGIN_CALL = re.compile(
    r"(?i:pw|passw(?:or)?d|credentials?|log_?in|sign_?in|authenticate|auth|basic)(?:_set)?"
    r"(?:[ \t]*(?:=[ \t]*)?\(|[ \t]+(?=[\"'])|,[ \t]*(?=[\"']))"
    r"[ \t]*(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|[\w.]{1,100})[ \t]*,[ \t]*(?:Some\([ \t]*)?(?P<quote>[\"'])"
    r"(?P<value>[^\"'\s]{1,300}|[A-Za-z0-9]{4}(?:[ \t][A-Za-z0-9]{4}){3})(?P=quote)"
)
_APP_PASSWORD_GROUPS = re.compile(r"[a-z]{4}(?:[ \t][a-z]{4}){3}|[A-Z]{4}(?:[ \t][A-Z]{4}){3}")
# A user and password given together as one literal under a name that says so (curl's
# ``CURLOPT_USERPWD, "user:…"``, ``userpass = "user:…"``).
_USER_AND_PASSWORD = re.compile(
    r"(?i:userpwd|user_?pass(?:word)?|user_?pwd)[\"']?\]?[ \t]*(?:,|=>|=|:)[ \t]*(?P<quote>[\"'])[^\"':\s]{1,100}:"
    r"(?P<value>[^\"'\s]{1,300})(?P=quote)"
)
# MySQL's ``SET PASSWORD [FOR user] = '…'``, the literal maybe inside ``PASSWORD(…)``.
_SET_PASSWORD = re.compile(
    r"(?<![\w-])(?i:set[ \t]+password)(?:[ \t]+(?i:for)[ \t]+[^\n=;]{1,100}?)?[ \t]*=[ \t]*(?:(?i:password)[ \t]*\([ \t]*)?"
    r"(?P<quote>['\"])(?P<value>[^'\"\n]{1,300})(?P=quote)"
)
# A setter or builder named for a credential given a literal (``ds.setPassword("…")``,
# ``.withToken("…")``, ``.password("…")``).
_SETTER_CALL = re.compile(
    r"(?<![A-Za-z0-9_])(?P<method>[A-Za-z][A-Za-z0-9_]{1,44})"
    r"[ \t]*\([ \t]*(?P<quote>[\"'])(?P<value>[^\"'\n]{1,300})(?P=quote)[ \t]*\)"
)
_SETTER_PREFIX = re.compile(r"(?:set|with)(?=[A-Z])")
_CALLED_WITH_A_LITERAL = re.compile(r"\([ \t]*[\"']")
# The literal an environment lookup falls back to when the variable is unset (``os.getenv("DB_PASSWORD",
# "…")``, ``ENV.fetch('X', '…')``, ``${DB_PASSWORD:-…}``) is the secret itself when the variable, or
# the setting the lookup fills, names one and the literal looks made.
_CREDENTIAL_METHOD = re.compile(r"(?i)pass(?:word|wd|phrase)|secret|token|api_?key")
_ENV_FALLBACK = re.compile(
    r"(?:getenv|environ\.get|ENV\.fetch|env\.get|Getenv|env)[ \t]*[(\[][ \t]*(?P<q1>[\"'])(?P<name>[^\"'\n]{1,80})(?P=q1)"
    r"[ \t]*,[ \t]*(?P<quote>[\"'])(?P<value>[^\"'\n]{1,300})(?P=quote)"
    r"|\$\{(?P<shell>[A-Za-z_]\w{0,60}):?-(?P<default>[^}\s\"'$]{1,300})\}"
)
_SETTING_BEFORE = re.compile(r"(?P<label>[A-Za-z_][\w.-]{0,60})\\?[\"']?[ \t]*(?::|=|=>)[^\n:]{0,40}\Z")
_CLIENT_CALL = re.compile(r"(?:Client|API|Api|client)[ \t]*\([ \t]*(?P<quote>[\"'])(?P<value>[\w-]{20,200})(?P=quote)[ \t]*\)")
_CONNECT_OWNERS = re.compile(r"(?i)mysqldb|pymysql|mysql|mariadb|pg8000|drivermanager")
# The word cookie, or curl's flag that sends one (``curl -b 'session=…'``).
_COOKIE = re.compile(r"(?i)(?<![\w-])(?:set-)?cookies?\b|(?<!\S)(?:-b|--cookie)(?=[ \t]+[\"']?[\w.-]{1,64}=)")
_COOKIE_PAIR = re.compile(r"(?P<name>[A-Za-z0-9_.!#$%&'*+^`|~-]{1,64})=(?P<value>[^;\s,\"']{1,4096})")
_SESSION_COOKIE = re.compile(r"(?i)sess|sid|auth|token|jwt|remember|login|identity|csrf|xsrf")
# A row of a browser's cookies exported in Netscape's ``cookies.txt`` form: domain, whether its
# subdomains share it, path, secure, expiry, then the cookie's name and value, tab-separated.
_COOKIE_FILE_ROW = re.compile(
    r"(?m)^[^\t\n]{1,255}\t(?:TRUE|FALSE)\t[^\t\n]{0,1024}\t(?:TRUE|FALSE)\t\d{1,12}\t(?P<name>[^\t\n]{1,255})\t"
    r"(?P<value>[^\t\r\n]{1,4096})")
_COOKIE_REACH = 4096
# A pair that names its value in JSON, as HAR files, Postman's environments and cookie exports
# give them (``{"name": "session", "value": "…"}``).
_NAMED_VALUE = re.compile(
    r"\\?\"(?:name|key)\\?\"[ \t]*:[ \t]*\\?\"(?P<name>[^\"\\\n]{1,64})\\?\"[ \t]*,[ \t]*"
    r"\\?\"value\\?\"[ \t]*:[ \t]*\\?\"(?P<value>[^\"\\\n]{1,4096})\\?\""
)
# A cookie made in code from its name and value (.NET's and PowerShell's ``Cookie("sid", "…", …)``,
# Java's ``new Cookie("session", "…")``).
_COOKIE_MADE = re.compile(r"Cookie[ \t]*\([ \t]*(?P<q1>[\"'])(?P<name>[^\"'\n]{1,64})(?P=q1)[ \t]*,[ \t]*"
                          r"(?P<q2>[\"'])(?P<value>[^\"'\s]{16,4096})(?P=q2)")
# A session cookie's pair, named as frameworks name theirs (``PHPSESSID``, ``JSESSIONID``,
# ``ASP.NET_SessionId``, ``laravel_session``, ASP.NET Core's ``.AspNetCore.Cookies``, WordPress's
# ``wordpress_logged_in_<hash>``), needs no word cookie before it.
_SESSION_PAIR = re.compile(
    r"(?<![\w.-])(?P<name>[A-Za-z0-9_.-]{0,40}(?i:sessid|session_?id|[._]session|\.sid|\.cookies|\.aspxauth"
    r"|_logged_in(?:_[0-9a-f]{32})?))=(?P<value>[^;\s,\"']{16,4096})"
)
_NETRC = re.compile(
    r"(?<![\w-])(?i:machine[ \t]+\S+|default|login[ \t]+\S+)"
    r"(?:\s+(?i:login|account|port|protocol)[ \t]+\S+){0,4}\s+(?i:password|passwd)[ \t]+(?P<value>\S{1,300})"
)
# A Wi-Fi QR code's text: ``WIFI:T:WPA;S:<ssid>;P:<password>;;`` (backslash escapes ``;``).
_WIFI_QR = re.compile(r"WIFI:(?:[A-Z]:(?:\\.|[^;\\\n]){0,64};){0,4}P:(?P<value>(?:\\.|[^;\\\n]){1,64});")
_PGPASS = re.compile(
    r"(?m)^[ \t]*(?P<host>[A-Za-z0-9*][\w.*-]{0,252}):(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:(?P<value>(?:[^\s:\\]|\\.){1,300})[ \t]*$"
)


def _basic(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return generated(value)
    return ":" in decoded or generated(value)


def headers(text: str) -> Iterator[Hit]:
    for match in _AUTHORIZATION.finditer(text):
        value = match.group("value")
        if not placeholder(value) and (match.group("scheme") or generated(value)):
            yield Hit(match.start("value"), match.end("value"), TOKEN)
    for match in _SCHEME.finditer(text):
        value, scheme = match.group("value"), match.group("scheme").lower()
        if not placeholder(value) and (_basic(value) if scheme == "basic" else generated(value, 12)):
            yield Hit(match.start("value"), match.end("value"), TOKEN)


def command_lines(text: str) -> Iterator[Hit]:
    if "CPIN" in text or "cpin" in text:
        for match in _SIM_PIN_COMMAND.finditer(text):
            for group in ("pin", "new"):
                if match.group(group) is not None:
                    yield Hit(match.start(group), match.end(group), PASSWORD)
    for match in _USER_PASS.finditer(text):
        value = match.group("value").rstrip(".,;)")
        if not placeholder(value) and not value.isdigit() and not placeholder(match.group("user") or "x"):
            yield Hit(match.start("value"), match.start("value") + len(value), PASSWORD)
    for match in _LONG_FLAG.finditer(text):
        if label_strength(match.group("label")) != STRONG and not _PASS_OPTION.search(match.group("label")):
            continue
        value = _argument(match.group("value"))
        # "--token or MEMVAULT_TOKEN": the sentence goes on where a value would be. A secret's
        # reference (BuildKit's ``--secret id=npmrc,src=…``) names where it is kept.
        if value and not value.isdigit() and not prose(value) and not code(value) and not _SECRET_REFERENCE.match(value):
            yield Hit(match.start("value"), match.start("value") + len(value), PASSWORD)
    if "login" in text:
        for match in _LOGIN_ARGUMENT.finditer(text):
            if random_token(value := match.group("value")):
                yield Hit(match.start("value"), match.end("value"), TOKEN)
    for match in _COMMAND_FLAG.finditer(text):
        command = match.group("command").lower().split()[0]
        wanted = next((f for name, f in _FLAG_OF.items() if command.startswith(name)), "-p")
        attached_only = command.startswith(_ATTACHED_ONLY)
        found: re.Match[str] | None = match
        for _ in range(_MOST_FLAGS):
            if found is None or found.group("flag") == wanted:
                break
            found = _LATER_FLAG.match(text, found.end("flag"))
        if found is not None and found.group("flag") != wanted:
            continue
        value = _argument(found.group("value")) if found else ""
        # A sentence about the flag goes on in words ("ldapsearch -w is deprecated").
        if found is None or (attached_only and found.group("gap")) or not value or (found.group("gap") and prose(value)):
            continue
        yield Hit(found.start("value"), found.start("value") + len(value), PASSWORD)


def _argument(value: str) -> str:
    """A flag's value less the punctuation of the usage line or sentence around it; empty when
    it is a placeholder or a usage line's metavariable (``--token TOKEN``, ``[--password P]``)."""
    value = value.rstrip("`.,;:)]}>")
    return "" if not value or placeholder(value) or _METAVARIABLE.match(value) else value


def password_arguments(text: str) -> Iterator[Hit]:
    for match in _HTPASSWD.finditer(text):
        flags, args = match.group("flags"), match.group("args").split()
        if "b" in flags and len(args) == (2 if "n" in flags else 3) and not placeholder(args[-1]):
            yield Hit(match.end("args") - len(args[-1]), match.end("args"), PASSWORD)
    for match in _PASS_ARGUMENT.finditer(text):
        group = next(name for name in ("value", "net", "chpasswd", "stdin") if match.group(name) is not None)
        if not placeholder(match.group(group)):
            yield Hit(match.start(group), match.end(group), PASSWORD)
    for needs, pattern in _RARE_ARGUMENTS:
        if any(need in text for need in needs):
            for match in pattern.finditer(text):
                group = "value" if match.group("value") is not None else "login"
                if not placeholder(match.group(group)):
                    yield Hit(match.start(group), match.end(group), PASSWORD)
    yield from _statements_and_calls(text)
    yield from _environment_fallbacks(text)
    for match in _CONNECT_CALL.finditer(text):
        # ``connect`` and ``getConnection`` are a database driver's only when its name is before them.
        owned = match.group("call") not in ("connect", "getConnection") or _CONNECT_OWNERS.search(
            text, max(0, match.start() - 20), match.start("call"))
        value = match.group("value")
        if owned and not placeholder(value) and not any(c.isspace() for c in value):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)


def _statements_and_calls(text: str) -> Iterator[Hit]:
    for pattern, word in ((_IDENTIFIED_BY, "dentified"), (_REDIS_AUTH, "AUTH"), (_SET_PASSWORD, "assword")):
        if word in text or word.upper() in text:
            for match in pattern.finditer(text):
                group = "bare" if "bare" in pattern.groupindex and match.group("bare") is not None else "value"
                value = match.group(group)
                if not placeholder(value) and not prose(value) and (group == "value" or generated(value, 6)):
                    yield Hit(match.start(group), match.end(group), PASSWORD)
    # Most text calls nothing and quotes no argument, and a scan for the call's name costs more than this.
    if "(" in text or "', " in text or '", ' in text:
        for match in _LOGIN_CALL.finditer(text):
            # An app password's four groups of four letters are its shape, however plain each looks.
            if _APP_PASSWORD_GROUPS.fullmatch(match.group("value")) \
                    or generated(match.group("value").replace(" ", "").replace("\t", ""), 6):
                yield Hit(match.start("value"), match.end("value"), PASSWORD)
    for match in _USER_AND_PASSWORD.finditer(text) if "ser" in text or "SER" in text else ():
        if not placeholder(match.group("value")):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)
    if "(" not in text:
        return
    for match in _SETTER_CALL.finditer(text) if _CALLED_WITH_A_LITERAL.search(text) else ():
        method = match.group("method")
        if (prefix := _SETTER_PREFIX.match(method)) is not None:
            label = method[prefix.end():]
        elif text[match.start() - 1:match.start()] == "." and _CREDENTIAL_METHOD.fullmatch(method):
            label = method
        else:
            continue
        if label_strength(label) == STRONG and value_is_secret(label, match.group("value")):
            yield Hit(match.start("value"), match.end("value"), kind_of(label))
    for match in _CLIENT_CALL.finditer(text):
        value = match.group("value")
        if random_token(value) and classes(value) >= 3:
            yield Hit(match.start("value"), match.end("value"), API_KEY)


def _environment_fallbacks(text: str) -> Iterator[Hit]:
    if "env" not in text.lower() and "${" not in text:
        return
    for match in _ENV_FALLBACK.finditer(text):
        name, group = (match.group("name"), "value") if match.group("name") is not None else (match.group("shell"), "default")
        label = name
        if label_strength(name) is None:
            # ``password: <%= ENV.fetch('X', '…') %>``: the setting the lookup fills names the credential.
            line_start = text.rfind("\n", 0, match.start()) + 1
            setting = _SETTING_BEFORE.search(text, line_start, match.start())
            if setting is None or label_strength(label := setting.group("label")) is None:
                continue
        # A word (``'postgres'``) is a development default that every copy of the code carries.
        if value_is_secret(label, value := match.group(group)) and generated(value, 6):
            yield Hit(match.start(group), match.end(group), kind_of(label))


def cookies(text: str) -> Iterator[Hit]:
    """A cookie that holds a session or a login is a bearer credential: whoever sends it is signed in."""
    if "=" in text and ("ess" in text or "ESS" in text or ".sid" in text or "ookies" in text or "_in" in text
                        or "AUTH" in text):
        for pair in _SESSION_PAIR.finditer(text):
            if generated(value := pair.group("value"), 16):
                yield Hit(pair.start("value"), pair.end("value"), TOKEN)
    if '"value"' in text or '\\"value\\"' in text:
        for pair in _NAMED_VALUE.finditer(text):
            name, value = pair.group("name"), pair.group("value")
            if label_strength(name) is not None:
                secret = value_is_secret(name, value)
            else:
                secret = bool(_SESSION_COOKIE.search(name)) and generated(value, 16)
            if secret:
                yield Hit(pair.start("value"), pair.end("value"), kind_of(name) if label_strength(name) else TOKEN)
    for made in _COOKIE_MADE.finditer(text) if "Cookie" in text else ():
        if _SESSION_COOKIE.search(made.group("name")) and generated(value := made.group("value"), 16):
            yield Hit(made.start("value"), made.end("value"), TOKEN)
    for row in _COOKIE_FILE_ROW.finditer(text) if "\t" in text else ():
        if _SESSION_COOKIE.search(row.group("name")) and generated(value := row.group("value"), 16):
            yield Hit(row.start("value"), row.end("value"), TOKEN)
    scanned = 0
    for word in _COOKIE.finditer(text):
        start = max(word.end(), scanned)
        line_end = text.find("\n", start)
        reach = min(len(text) if line_end < 0 else line_end, word.end() + _COOKIE_REACH)
        scanned = max(scanned, reach)
        for pair in _COOKIE_PAIR.finditer(text, start, reach):
            value = pair.group("value")
            if _SESSION_COOKIE.search(pair.group("name")) and len(value) >= 16 and generated(value, 16):
                yield Hit(pair.start("value"), pair.end("value"), TOKEN)


# OpenVPN's ``auth-user-pass`` file holds the user on its first line and the password on its second;
# pasted after the option's name, maybe as comments, the two lines follow it closely.
_AUTH_USER_PASS = re.compile(r"auth-user-pass\b")
_AUTH_FILE_REACH = 200
_AUTH_FILE_LINES = re.compile(
    r"(?m)^[ \t]*(?:#[ \t]*)?[\w.@+-]{1,64}[ \t]*\r?\n[ \t]*(?:#[ \t]*)?(?P<value>[^\s#][^\s]{5,127})[ \t]*\r?$"
)


# SMTP's AUTH LOGIN asks for each part in base64: ``334 UGFzc3dvcmQ6`` is "Password:", and the
# client's next line is the password in base64 (a transcript may mark the sides ``C:`` and ``S:``).
_SMTP_PASSWORD = re.compile(r"334[ \t]+UGFzc3dvcmQ6[ \t]*\r?\n[ \t]*(?:C:[ \t]*)?(?P<value>[A-Za-z0-9+/]{4,400}={0,2})(?![\w+/=])")


# A line of ``/etc/passwd``'s shape whose second field holds the password itself, as a cracker
# prints what it found (``john --show``) or an old system kept it: ``x``, ``*`` and ``!`` say the
# password is elsewhere or locked.
_PASSWD_LINE = re.compile(
    r"(?m)^[ \t]*[A-Za-z_][\w.$-]{0,31}:(?P<value>[^:\s]{1,128}):\d{1,10}:\d{1,10}:[^:\n]{0,200}:[^:\n]{0,200}:[^:\n]{0,100}$"
)
_NO_PASSWORD_HERE = frozenset({"x", "*", "!", "!!", "!*", "*LK*", "NP"})


def credential_files(text: str) -> Iterator[Hit]:
    """``.netrc`` and ``.pgpass`` entries, an OpenVPN credentials file, a Wi-Fi QR code's password
    and an SMTP login's."""
    if "UGFzc3dvcmQ6" in text:
        for match in _SMTP_PASSWORD.finditer(text):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)
    if "auth-user-pass" in text:
        for option in _AUTH_USER_PASS.finditer(text):
            lines = _AUTH_FILE_LINES.search(text, option.end(), min(len(text), option.end() + _AUTH_FILE_REACH))
            if lines is not None and classes(value := lines.group("value")) >= 3 and generated(value, 6) \
                    and not placeholder(value):
                yield Hit(lines.start("value"), lines.end("value"), PASSWORD)
    for match in _WIFI_QR.finditer(text):
        if not placeholder(match.group("value")):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)
    for match in _NETRC.finditer(text):
        value = match.group("value").rstrip("`,;)]}")
        if value and not placeholder(value):
            yield Hit(match.start("value"), match.start("value") + len(value), PASSWORD)
    for match in _PASSWD_LINE.finditer(text) if "::" in text or ":/" in text else ():
        value = match.group("value")
        if value not in _NO_PASSWORD_HERE and not value.startswith("!") and not placeholder(value):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)
    for match in _PGPASS.finditer(text):
        host, value = match.group("host"), match.group("value")
        if (host == "*" or any(c.isalpha() for c in host)) and not placeholder(value):
            yield Hit(match.start("value"), match.end("value"), PASSWORD)

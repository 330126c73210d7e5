"""The secret corpus (tests/secret_corpus.py): every secret the gate was tuned on disappears and
every tuned look-alike comes back verbatim; over the whole corpus, held-out splits included, at least
97 % of secrets are caught and at most 2 % of look-alikes are touched; the second to eighth
held-out splits keep the rates measured on them; the share per family and
split is printed. Redaction is idempotent, and adversarial input costs CPU linear in its size."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memvault.core.redaction import redact
from secret_corpus import HARMLESS, SECRETS, Case, caught, leaks, report, shares

TUNED_SECRETS = [case for case in SECRETS if case.split == "tuned"]
TUNED_HARMLESS = [case for case in HARMLESS if case.split == "tuned"]


def test_the_corpus_holds_150_secrets_and_150_look_alikes_with_a_held_out_split() -> None:
    assert len(SECRETS) >= 150 and len(HARMLESS) >= 150
    assert sum(case.split != "tuned" for case in SECRETS) >= 0.25 * len(SECRETS)
    assert sum(case.split != "tuned" for case in HARMLESS) >= 0.25 * len(HARMLESS)
    assert len({case.family for case in SECRETS}) >= 30
    second = [case for case in SECRETS if case.split == "heldout2"]
    assert len(second) >= 150 and len({case.family for case in second}) >= 40
    assert sum(case.split == "heldout2" for case in HARMLESS) >= 100
    third = [case for case in SECRETS if case.split == "heldout3"]
    assert len(third) >= 200 and len({case.family for case in third}) >= 70
    assert sum(case.split == "heldout3" for case in HARMLESS) >= 150
    fourth = [case for case in SECRETS if case.split == "heldout4"]
    assert len(fourth) >= 200 and len({case.family for case in fourth}) >= 80
    assert sum(case.split == "heldout4" for case in HARMLESS) >= 150
    fifth = [case for case in SECRETS if case.split == "heldout5"]
    assert len(fifth) >= 200 and len({case.family for case in fifth}) >= 150
    assert sum(case.split == "heldout5" for case in HARMLESS) >= 150
    sixth = [case for case in SECRETS if case.split == "heldout6"]
    assert len(sixth) >= 250 and len({case.family for case in sixth}) >= 250
    assert sum(case.split == "heldout6" for case in HARMLESS) >= 150
    assert all(case.secret and case.secret in case.text for case in SECRETS)


@pytest.mark.parametrize("case", TUNED_SECRETS, ids=[f"{n}-{c.family}" for n, c in enumerate(TUNED_SECRETS)])
def test_every_tuned_secret_disappears_and_its_kind_is_reported(case: Case) -> None:
    result = redact(case.text)
    assert caught(case, result.text), result.text
    if case.kind:
        assert case.kind in result.kinds
        assert f"[redacted:{case.kind}" in result.text


@pytest.mark.parametrize("case", TUNED_HARMLESS, ids=[f"{n}-{c.family}" for n, c in enumerate(TUNED_HARMLESS)])
def test_every_tuned_look_alike_comes_back_verbatim(case: Case) -> None:
    result = redact(case.text)
    assert result.text == case.text
    assert result.kinds == ()


def test_across_the_whole_corpus_97_percent_are_caught_and_2_percent_touched(capsys: pytest.CaptureFixture[str]) -> None:
    caught_table = shares(SECRETS, lambda case: caught(case, redact(case.text).text))
    kept_table = shares(HARMLESS, lambda case: redact(case.text).text == case.text)
    with capsys.disabled():
        print("\n" + report("secrets caught", caught_table) + "\n" + report("look-alikes kept", kept_table))
    found = sum(n for n, _ in caught_table.values())
    kept = sum(n for n, _ in kept_table.values())
    assert found >= 0.97 * len(SECRETS), f"{found}/{len(SECRETS)} caught"
    assert len(HARMLESS) - kept <= 0.02 * len(HARMLESS), f"{len(HARMLESS) - kept}/{len(HARMLESS)} touched"


def test_the_second_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 221/240 caught and 3/158 touched; after the rules it exposed were
    # generalised, 239/240 and none (the one left: a bare 32-hex argument, an MD5's shape).
    secrets = [case for case in SECRETS if case.split == "heldout2"]
    harmless = [case for case in HARMLESS if case.split == "heldout2"]
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 1, missed
    assert not touched, touched


def test_the_third_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 237/264 caught and 8/176 touched; after the rules it exposed were
    # generalised, 262/264 and none; 263 since the fourth split's rules read a security question's
    # answer. Left: a garage door's code, kept as household knowledge like any door's or gate's code.
    secrets = [case for case in SECRETS if case.split == "heldout3"]
    harmless = [case for case in HARMLESS if case.split == "heldout3"]
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 1, missed
    assert not touched, touched


def test_the_fourth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 186/238 caught and 0/183 touched; after the rules it exposed were
    # generalised, 232/238 and none; 233 since the fifth split's rules read a code told as sent,
    # 234 since the sixth's read a password rule's shape with no label (a login pair with no login
    # word). Left: a passphrase of plain words after "Password:", a card's code told as "the three
    # digits on the back", a one-time code after a Hindi label, and an alarm's code under a German
    # compound.
    secrets = [case for case in SECRETS if case.split == "heldout4"]
    harmless = [case for case in HARMLESS if case.split == "heldout4"]
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 4, missed
    assert not touched, touched


def test_the_fifth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 318/353 caught and 6/202 touched; after the rules it exposed were
    # generalised, 350/353 and none; 352 since the sixth split's rules read a password rule's shape
    # with no label and an answer below a question asking for a credential. Left: a bare
    # 40-character run with no word beside it.
    secrets = [case for case in SECRETS if case.split == "heldout5"]
    harmless = [case for case in HARMLESS if case.split == "heldout5"]
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 1, missed
    assert not touched, touched


@pytest.mark.parametrize("text", [c.text for c in SECRETS + HARMLESS], ids=range(len(SECRETS) + len(HARMLESS)))
def test_redacting_redacted_text_changes_nothing(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.kinds == ()


def test_labels_stay_and_values_go() -> None:
    assert redact("db_password=s3cretP@ss").text == "db_password=[redacted:password]"
    assert redact('{"password": "P@ssw0rd!2024"}').text == '{"password": "[redacted:password]"}'
    assert redact("SSN 219099999").text == "SSN [redacted:ssn]"
    assert redact("the secret access key is pdzPaEMM1ZA7V0FhHVJWDBt2hWdQZUm14QhoxhLP").text == (
        "the secret access key is [redacted:api_key]")


def test_unicode_disguises_are_seen_through_and_the_rest_of_the_text_is_kept_as_sent() -> None:
    text = "caf\u00e9 card 4111\u00a01111\u20131111\u201311\u200b11 \u2014 thanks"
    assert redact(text).text == "caf\u00e9 card [redacted:card_number ending 1111] \u2014 thanks"
    assert redact("ＳＳＮ：５３６－２２－８７４５").text == "ＳＳＮ：[redacted:ssn]"


def test_a_leak_is_a_long_secret_anywhere_or_a_short_one_standing_alone() -> None:
    pin, token = Case("pin", "PIN 12/4", "12/4", "pin", "tuned"), Case("key", "key Ab3Cd4Ef5", "Ab3Cd4Ef5", "key", "tuned")
    assert leaks([pin, token], "x12/4y idAb3Cd4Ef5z") == ["key: Ab3Cd4Ef5"]
    assert leaks([pin], "12/4") == leaks([pin], "(12/4)") == ["pin: 12/4"]
    assert leaks([pin], "a12/4 then 12/4.") == ["pin: 12/4"]  # the second time it stands alone
    assert leaks([pin], "?q=12%2F4&") == leaks([pin], "?q=12%2f4&") == ["pin: 12/4"]
    assert leaks([pin, token], "a12%2F4b Ab3Cd4E f5") == []
    for before in range(9):  # at every place in the 4-character grid leaks() indexes the text by
        assert leaks([token], "." * before + "Ab3Cd4Ef5") == leaks([token], "." * before + "Ab3Cd4Ef5..") == ["key: Ab3Cd4Ef5"]
        assert leaks([token], "." * before + "Ab3%43d4Ef5") == ["key: Ab3Cd4Ef5"]  # found unescaped
        assert leaks([token], "." * before + "Ab3Cd4Ef") == []


# The suite times 50 KB of each adversarial input; the size docs/security.md states is a longer run:
#   ADVERSARIAL_KB=200 .venv/bin/python -m pytest tests/unit/test_secret_corpus.py -k linear_time
ADVERSARIAL_KB = int(os.environ.get("ADVERSARIAL_KB", "50"))


def _fill(unit: str, size: int = ADVERSARIAL_KB * 1000) -> str:
    return (unit * (size // len(unit) + 1))[:size]


# Each repeats the start of some rule without ever completing it, the classic way to make a
# backtracking pattern quadratic; the last mixes them all.
ADVERSARIAL = {
    "digits": _fill("4"),
    "digit groups": _fill("4111 "),
    "digit lines": _fill("4111\n"),
    "near SSNs": _fill("123-45-"),
    "dotted digits": _fill("1."),
    "identifier": _fill("a_"),
    "key prefix": _fill("sk-"),
    "key tail": "sk-" + _fill("aB3"),
    "password labels": _fill("password: "),
    "chained labels": _fill("password=token="),
    "prose labels": _fill("password for a "),
    "open quote": 'password: "' + _fill("x"),
    "aws context": _fill("secretaccesskey" + "A" * 39 + " "),
    "jwt start": _fill("eyJaaaaaaaaaa.eyaaaaaaaa"),
    "pem": _fill("-----BEGIN RSA RSA "),
    "pem begins": _fill("-----BEGIN PRIVATE KEY-----\n"),
    "ssn context": "ssn " + _fill("12 "),
    "url": "http://" + _fill("a:"),
    "url at signs": "http://" + _fill("a@"),
    "schemes": _fill("https://u:p@h "),
    "seed words": _fill("abandon ability "),
    "credential words": _fill("token key secret "),
    "commands": _fill("mysql -u a -p "),
    "netrc": _fill("machine a login b "),
    "unicode": _fill("p\u00e4ssw\u00f6rd\u00a0=\u2013x\u200b "),
    "seed words any case": _fill("Abandon ABILITY able - "),
    "seed words quoted": _fill('"abandon", "ability", '),
    "jwt across lines": _fill("eyJaaaaaaaaaa.\neyaaaaaaaa.\n"),
    "card codes": _fill("CVV 123 cvc: 4567 "),
    "labels ending lines": _fill("password:\n"),
    "values on next lines": _fill("password:\nab1c\n"),
    "long next lines": _fill("password=\n" + "x" * 299 + " "),
    "login pairs": _fill("login admin/"),
    "wifi pairs": _fill("wifi: a / b:"),
    "pem ends": _fill("QUJD" * 5 + "\n-----END PRIVATE KEY-----\n"),
    "pem body then end": _fill("QUJD" * 16 + "\n") + "-----END PRIVATE KEY-----",
    "foreign is": _fill("Passwort ist "),
    "cjk is": _fill("密码是"),
    "as the password": _fill("x" * 99 + " as the password "),
    "as a quoted password": _fill("'" + "x" * 99 + " as the password "),
    "cookie pairs": "Cookie: " + _fill("sid=" + "aB3" * 10 + "; "),
    "cookie words": _fill("cookie sid=aB3aB3aB3aB3aB3aB3 "),
    "recovery labels": _fill("recovery codes: 1234 "),
    "recovery codes": "backup codes: " + _fill("f4fc8-24a01\n"),
    "grouped base32": "2FA key: " + _fill("GFSF H2H3 "),
    "bitlocker": _fill("123456-"),
    "hex keys": _fill("wallet 0x" + "ab" * 33),
    "htpasswd": _fill("htpasswd -b -b -b -b -b -b "),
    "net user": _fill("net user a "),
    "pin": _fill("PIN is 1234 "),
    "door codes": _fill("door code for the "),
    "table rows": _fill("| password | x |\n"),
    "table cells": _fill("|a|"),
    "table rules": _fill("|---|\n"),
    "tables under rules": _fill("|---|\n| password | a1b2c3d4 |\n"),
    "quoted names": _fill("'password', "),
    "typed names": _fill("password: str "),
    "driver addresses": _fill("a:b@tcp("),
    "decoded base64": _fill("echo aGVsbG8gd29ybGQ= | base64 -d "),
    "connect calls": _fill("mysqli('a', 'b', "),
    "continued lines": _fill("a\\\n"),
    "wifi codes": _fill("WIFI:T:a;"),
    "escaped queries": _fill("%3Fpassword%3D"),
    "passphrases": _fill("passphrase: a "),
    "quotes": _fill("password \u201e\u00ab\u300c"),
    "words before a foreign value": _fill("\u043f\u0430\u0440\u043e\u043b\u044c \u043c\u043e\u0439 "),
    "foreign labels": _fill("\u0643\u0644\u0645\u0629 \u0627\u0644\u0633\u0631 \u0647\u064a "),
    "login calls": _fill("login('a', "),
    "client calls": _fill("Client('" + "aB3" * 7),
    "csv headers": _fill("a,password,b\n"),
    "csv rows": "user,password\n" + _fill("a,b\n"),
    "security questions": _fill("security question maiden name is "),
    "codes put first": _fill("1234 is your "),
    "der keys": _fill("MIGTAgEA"),
    "key words": _fill("key aB3 "),
    "mqtt flags": _fill("mosquitto_pub -p 1 "),
    "identified by": _fill("IDENTIFIED BY '"),
    "redis auth": _fill("> AUTH a "),
    "login for": _fill("login for the a b c "),
    "label lines": _fill("Password\n"),
    "blank lines after labels": _fill("password:\n\n"),
    "spelled out": _fill("password is a "),
    "codes told as sent": _fill("code they texted me "),
    "bank numbers": _fill("TAN for the "),
    "session pairs": _fill("a_session="),
    "mapped base64": _fill("k: QUJDREVGR0hJSktMTU5PUA==\n"),
    "key emoji": _fill("\U0001f511 "),
    "used to log in": _fill("use aB3!aB3! "),
    "login arguments": _fill("a login "),
    "oracle logins": "sqlplus " + _fill("-a "),
    "net use": _fill("net use /user:a "),
    "samba users": _fill("-U a%"),
    "elided prepositions": _fill("password dell'a "),
    "encoded names": _fill("secret_key_base "),
    "prose lists": _fill("apple, "),
    "storepass": _fill("-storepass -keypass "),
    "mixed": _fill("4111-1111 password=x SSN 123 eyJ.a sk-aB3 secret access key AKIA 1Z xoxb- ghp_ "),
    "characters apart": _fill("a "),
    "hex": _fill("ab") + "g",
    "hex bytes apart": _fill("ab "),
    "string literals joined": _fill('"ab" + '),
    "spaced SSN": "SSN " + _fill("5 "),
    "national numbers": "SIN " + _fill("1 2 3 "),
    "PIN in words": "PIN: " + _fill("one "),
    "one standing for it": "password my " + _fill("x "),
    "account pairs": "root=" + _fill("A1!"),
    "codes abroad": "código de verificación " + _fill("x"),
    "seeds numbered": _fill("#1 abandon "),
    "cards and CIDs": _fill("4111 1111 1111 1111 CID "),
    "ROT13 and its words": _fill("cnffjbeq vf "),
    "reversed words": _fill("drowssap ym si "),
    "character references": _fill("&#112;"),
    "references with text between": _fill("&#112;a"),
    "cards in words": _fill("four "),
    "digits a digit at a time": _fill("4 "),
    "cards in bars": _fill("4539|"),
    "safe combinations": _fill("safe combination 1-"),
    "corrections": "password: Xy7!abcd " + _fill("no wait, "),
    "keys cut over lines": "token: ghp_" + _fill("A1b2\n"),
    "maiden names": _fill("mother's maiden name is Ab "),
    "URL escapes": _fill("%20a"),
    "URL escapes of bytes": _fill("%C3"),
    "literals joined to a password": "password = 'Xy7!ab' " + _fill(". 'ab' "),
    "cards backwards in groups": _fill("reversed: 4111 1111 "),
    "tokens wrapped before their dots": _fill("eyJhbGciOiJIUzI1\n.") ,
    "answers after a dash": "security question " + _fill("first pet - it's "),
    "unlock codes abroad": _fill("codice di sblocco del "),
    "answers abroad": "Sicherheitsfrage " + _fill("Antwort: Frage "),
    "codes in bold": _fill("your code is <strong>"),
    "parts on list lines": "token: ghp_Xq7LmN2vKp9RtZ4wAb\n" + _fill("* part 2: \n"),
    "cookie file rows": _fill("a.b\tTRUE\t/\tTRUE\t1\tsid\t"),
    "commit ids after a token": "token " + _fill("0123456789abcdef0123456789abcdef01234567 x\n"),
}


# CPU seconds of this thread within which an input passes at once: 0.6 s for 200 KB, in proportion
# for other sizes. Past it (a busy machine slows even a thread's CPU time), the input must still
# grow about linearly: a quarter of it takes at least a tenth of its time (between a seventh and a
# quarter, measured), where a pattern that backtracks grows with the square of its input (a
# sixteenth) or worse; and none may take a ceiling (3 s for 200 KB, in proportion).
QUICK_SECONDS = 0.6 * ADVERSARIAL_KB / 200
MOST_GROWTH_FROM_A_QUARTER = 10.0
CEILING_SECONDS = 3.0 * ADVERSARIAL_KB / 200


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_an_adversarial_input_is_redacted_in_linear_time(text: str) -> None:
    """Each input repeats the start of a rule (one input per family of rules) at 50 KB, which a
    backtracking pattern already takes seconds over; ``ADVERSARIAL_KB=200`` runs them at the 200 KB
    docs/security.md states (about four times the CPU)."""
    whole = _timed(text)
    if whole < QUICK_SECONDS:
        return
    whole = min(whole, _timed(text))
    quarter = min(_timed(text[: len(text) // 4]) for _ in range(2))
    assert whole < CEILING_SECONDS, f"{whole:.2f}s"
    assert whole <= MOST_GROWTH_FROM_A_QUARTER * quarter, f"{whole:.2f}s, a quarter of it {quarter:.3f}s"


def _timed(text: str) -> float:
    start = time.thread_time()
    redact(text)
    return time.thread_time() - start


def test_the_sixth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 302/396 caught and 6/229 touched; after the rules it exposed were
    # generalised, 385/396 and none; 388 since the seventh split's rules (an OpenVPN auth file's
    # second line, a password's part under its label, a code's digits grouped by dashes). Left:
    # three passwords of words, digits and dashes or a dot with no label or question before them
    # ("try Hq4-bravo-Tango-7"), one spelled in the NATO alphabet, a locker's combination and a
    # door's code (household knowledge), a passphrase of plain words, and one after Chinese's
    # "password" in pinyin.
    secrets = [case for case in SECRETS if case.split == "heldout6"]
    harmless = [case for case in HARMLESS if case.split == "heldout6"]
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 8, missed
    assert not touched, touched


# The starts of the rules the sixth split brought, each repeated without ever completing.
SIXTH_SPLIT_ADVERSARIAL = {
    "rule-shaped runs": _fill("aB3!aB3 "),
    "one rule-shaped run": _fill("aB3!"),
    "questions and answers": _fill("what's the password?\naB3-x\n"),
    "question lines": _fill("password?\n"),
    "misspelt labels": _fill("p4ssw0rd "),
    "spaced labels": _fill("p a s s w o r d "),
    "misspelt labels in prose": _fill("pasword for a b c "),
    "groups without spaces": _fill("aB3 (no spaces) "),
    "insert values": "INSERT INTO t (password) VALUES (" + _fill("'a',"),
    "prompts": _fill(">>> password\n"),
    "environment fallbacks": _fill("os.getenv('PASSWORD', '"),
    "setters": _fill("setPassword('"),
    "set to": _fill("set `password` to "),
    "property lists": _fill("<key>password</key>\n"),
    "openssl passwd": _fill("openssl passwd -1 -1 "),
    "to log in": _fill("to log in a "),
    "second factor words": _fill("totp ABCDEFGH2345"),
    "remarks after labels": _fill("password (a) "),
    "given as": _fill("password for a given as "),
    "echoed into sudo": _fill("echo a | sudo -S "),
    "secure strings": _fill("ConvertTo-SecureString 'a' "),
    "users and slashes": _fill("admin / aB3!"),
}


@pytest.mark.parametrize("text", SIXTH_SPLIT_ADVERSARIAL.values(), ids=SIXTH_SPLIT_ADVERSARIAL.keys())
def test_an_input_against_the_sixth_splits_rules_is_redacted_in_linear_time(text: str) -> None:
    test_an_adversarial_input_is_redacted_in_linear_time(text)


def test_the_seventh_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 323/353 caught and 5/228 touched; after the rules it exposed were
    # generalised, 345/353 and none. Left: a value before the words that make it one ("… — that's
    # the one for the router") and a router's grouped key with no credential word, a door's code
    # and a bike lock's combination (household knowledge), a password split over two messages with
    # no label, one spelled with a dot between its characters after "p.w.", one after a label and
    # ">>>", and a keypair written as a list of numbers.
    secrets = [case for case in SECRETS if case.split == "heldout7"]
    harmless = [case for case in HARMLESS if case.split == "heldout7"]
    assert len(secrets) >= 250 and len({case.family for case in secrets}) >= 250 and len(harmless) >= 150
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 8, missed
    assert not touched, touched


# The starts of the rules the seventh split brought, each repeated without ever completing.
SEVENTH_SPLIT_ADVERSARIAL = {
    "password parts": _fill("password part 1 "),
    "dotted labels": _fill("p.a.s.s.w.o.r.d "),
    "labels split in two": _fill("pass word "),
    "values after a colon": _fill("a: aB3!aB x"),
    "digit groups": _fill("alarm code 12-"),
    "unlocked with digits": _fill("unlock my phone it's 1234 x "),
    "short runs beside keys": _fill("key aB3dE4fG5hJ6K7 "),
    "expect and send": _fill('expect "password"\nsend "a'),
    "rclone obscure": _fill("rclone obscure "),
    "linked server logins": _fill("sp_addlinkedsrvlogin 'a', "),
    "oracle urls": _fill("oracle:thin:a/"),
    "net use before the user": _fill("net use \\\\a b "),
    "openvpn credentials": _fill("auth-user-pass\na\n"),
    "encrypted mappings": _fill("encryptedData:\n  a: " + "A" * 100 + "\n"),
    "backup codes after a dash": _fill("backup codes - a b c "),
}


@pytest.mark.parametrize("text", SEVENTH_SPLIT_ADVERSARIAL.values(), ids=SEVENTH_SPLIT_ADVERSARIAL.keys())
def test_an_input_against_the_seventh_splits_rules_is_redacted_in_linear_time(text: str) -> None:
    test_an_adversarial_input_is_redacted_in_linear_time(text)


def test_the_eighth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 337/371 caught and 9/193 touched; after the rules it exposed were
    # generalised, 366/371 and none. Left: a password dictated a character at a time with its
    # letters' cases and symbols said in words, the same with fillers between the label and the
    # value ("the password is uh lowercase t r o m b o n e"), one set in LaTeX after "login:" and a
    # user, a payment key's secret set after its public id with no word, and a hex seed that only
    # the code reading it (``ed25519.NewKeyFromSeed``) names.
    secrets = [case for case in SECRETS if case.split == "heldout8"]
    harmless = [case for case in HARMLESS if case.split == "heldout8"]
    assert len(secrets) >= 250 and len({case.family for case in secrets}) >= 250 and len(harmless) >= 150
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 5, missed
    assert not touched, touched


# The starts of the rules the eighth split brought, each repeated without ever completing.
EIGHTH_SPLIT_ADVERSARIAL = {
    "html rows": _fill("<td>password</td> <td>a"),
    "sql settings": _fill("value = 'a' where key = 'password "),
    "named values": _fill('{"name": "session", "value": "a'),
    "byte lists": _fill("[1, 2, 3, 4, "),
    "xml key members": _fill("<D>" + "A" * 30),
    "onion keys": _fill("ED25519-V3:" + "A" * 79 + " "),
    "secrets from stdin": _fill("echo a | wrangler secret "),
    "cookies after curl": _fill("curl -b 'a="),
    "framework cookies": _fill(".AspNetCore.Cookies=a; "),
    "lookalike letters": _fill("p\u0430ss \u0442\u043e"),
    "app passwords": _fill("app password abcd efgh "),
    "parenthesised values": _fill('password = ("'),
    "signed payloads": _fill("eyJhbGciOiJ." + "a" * 20 + "."),
    "vendor ids": _fill("CCIPAT_aaaaaaaaaaaaaaaaaaaa_ 1/1234567890123:"),
    "saml": _fill("PHNhbWxwOlJlc3BvbnNl" + "A" * 50 + " "),
    "type annotations": _fill("token: SecretString, key: String! "),
}


@pytest.mark.parametrize("text", EIGHTH_SPLIT_ADVERSARIAL.values(), ids=EIGHTH_SPLIT_ADVERSARIAL.keys())
def test_an_input_against_the_eighth_splits_rules_is_redacted_in_linear_time(text: str) -> None:
    test_an_adversarial_input_is_redacted_in_linear_time(text)


def test_the_ninth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 299/329 caught and 3/198 touched; after the rules it exposed were
    # generalised, 318/329 and none. Left: a key passed as a command's positional argument with no
    # word naming it, a hex key under a name the gate reads as a message broker's ("routing_key"),
    # a salt and an HMAC key under their own names, a safe's code whose label stands words away, a
    # card's code in French and a
    # PIN in Korean with the number of its digits between, digits dictated after a filler ("um")
    # or under "the code for my phone", a password dictated with its cases in words, and a token
    # spaced out after an instruction to join it.
    secrets = [case for case in SECRETS if case.split == "heldout9"]
    harmless = [case for case in HARMLESS if case.split == "heldout9"]
    assert len(secrets) >= 250 and len({case.family for case in secrets}) >= 250 and len(harmless) >= 150
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 11, missed
    assert not touched, touched


# The starts of the rules the ninth split brought, each repeated without ever completing.
NINTH_SPLIT_ADVERSARIAL = {
    "framed seeds": _fill("-----BEGIN USER NKEY SEED A "),
    "framed static keys": _fill("-----BEGIN OpenVPN Static key v"),
    "nt hashes": _fill("a:1:" + "a" * 32 + ":"),
    "netntlm responses": _fill("a::b:" + "0" * 16 + ":" + "a" * 32 + ":"),
    "cracked pairs": _fill("a" * 32 + ":b:"),
    "keytabs": _fill("BQIAAA" + "A" * 50 + " "),
    "webhook paths": _fill("/hooks/webhooks/" + "a" * 19),
    "smtp prompts": _fill("334 UGFzc3dvcmQ6\nC: "),
    "qualified code labels": _fill("backup sign-in codes a"),
    "spelled pins": _fill("PIN is 4 "),
    "owners between label and value": _fill("PIN meiner a "),
    "parts and encodings": _fill("password begins with hex-encoded "),
    "cisco types": _fill("password 7 "),
    "questions and answers": _fill("Q: your first pet's name?\nA: \n"),
}


@pytest.mark.parametrize("text", NINTH_SPLIT_ADVERSARIAL.values(), ids=NINTH_SPLIT_ADVERSARIAL.keys())
def test_an_input_against_the_ninth_splits_rules_is_redacted_in_linear_time(text: str) -> None:
    test_an_adversarial_input_is_redacted_in_linear_time(text)


def test_the_tenth_held_out_split_holds_the_rates_measured_when_its_misses_were_fixed() -> None:
    # Measured first at 284/319 caught and 0/185 touched; after the rules it exposed were
    # generalised, 313/319 and none. Left: Maven's master password in its braces under a name no
    # credential word ends, Bundler's credential under a setting named for its host, a CSV row of a
    # login with no header, a password after "as" ("shows the saved password … as …"), an English
    # label with words other than a qualifier between it and its colon before a value of capitals,
    # and a PIN told before the verb that ends a Persian sentence.
    secrets = [case for case in SECRETS if case.split == "heldout10"]
    harmless = [case for case in HARMLESS if case.split == "heldout10"]
    assert len(secrets) >= 250 and len({case.family for case in secrets}) >= 250 and len(harmless) >= 150
    missed = [case.text for case in secrets if not caught(case, redact(case.text).text)]
    touched = [redact(case.text).text for case in harmless if redact(case.text).text != case.text]
    assert len(missed) <= 6, missed
    assert not touched, touched


# The starts of the rules the tenth split brought, each repeated without ever completing.
TENTH_SPLIT_ADVERSARIAL = {
    "named elements": _fill('<property name="a.password" '),
    "keepass fields": _fill("<Key>Password</Key><Value "),
    "escaped letters": _fill("pa\\u0073s"),
    "login calls": _fill("basic_auth 'a', Some("),
    "users and passwords": _fill('USERPWD, "a:'),
    "set password": _fill("SET PASSWORD FOR a"),
    "passwd lines": _fill("a:b:1:2:" + "c" * 40 + "\n"),
    "cookies made in code": _fill('Cookie("sid", "'),
    "cached logons": _fill("$DCC2$10240#a#" + "0" * 31 + " "),
    "roasted tickets": _fill("$krb5tgs$23$" + "a" * 39 + " "),
    "labelled nt hashes": _fill("NTLM : " + "a" * 31 + " "),
    "sign-in links": _fill("/invite/" + "a" * 19 + " ?code=" + "a" * 19 + " "),
    "setup keys": _fill("2FA AAAA BBBB CCC2 "),
    "own words before a colon": _fill("kata sandi wifi kantor: "),
    "greek owners": _fill("PIN της κάρτας "),
}


@pytest.mark.parametrize("text", TENTH_SPLIT_ADVERSARIAL.values(), ids=TENTH_SPLIT_ADVERSARIAL.keys())
def test_an_input_against_the_tenth_splits_rules_is_redacted_in_linear_time(text: str) -> None:
    test_an_adversarial_input_is_redacted_in_linear_time(text)

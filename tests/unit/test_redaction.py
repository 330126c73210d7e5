"""The secret gate: every secret in the corpus is replaced, every benign look-alike survives."""

from __future__ import annotations

import pytest

from memvault.core.redaction import API_KEY, CARD_NUMBER, PRIVATE_KEY, SSN, luhn_valid, redact

SECRETS = [
    ("my visa is 4111 1111 1111 1111 exp 12/29", CARD_NUMBER, "4111 1111 1111 1111"),
    ("card 4242-4242-4242-4242", CARD_NUMBER, "4242-4242-4242-4242"),
    ("amex 378282246310005 on file", CARD_NUMBER, "378282246310005"),
    ("mastercard:5555555555554444.", CARD_NUMBER, "5555555555554444"),
    ("19-digit 6011000990139424 and 6011 0009 9013 9424", CARD_NUMBER, "6011000990139424"),
    ("SSN 123-45-6789 for the payroll form", SSN, "123-45-6789"),
    ("her social security number: 219099999", SSN, "219099999"),
    ("ssn 078 05 1120", SSN, "078 05 1120"),
    ("OPENAI_API_KEY=sk-proj-abcDEF1234567890ghijKLMN", API_KEY, "sk-proj-abcDEF1234567890ghijKLMN"),
    ("anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", API_KEY, "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"),
    ("stripe sk_live_51HxYzAbCdEfGhIjKl", API_KEY, "sk_live_51HxYzAbCdEfGhIjKl"),
    ("publishable pk-test-0123456789abcdefXYZ", API_KEY, "pk-test-0123456789abcdefXYZ"),
    ("aws AKIAIOSFODNN7EXAMPLE key", API_KEY, "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_16C7e42F292c6912E7710c838347Ae178B4a in CI", API_KEY, "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("slack xoxb-1234567890-abcdefghij", API_KEY, "xoxb-1234567890-abcdefghij"),
    ("xoxp-98765-43210-zyxwvut", API_KEY, "xoxp-98765-43210-zyxwvut"),
    (
        "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----\nthanks",
        PRIVATE_KEY,
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7 (truncated paste", PRIVATE_KEY, "MIIEpAIBAAKCAQEA7"),
    (
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----",
        PRIVATE_KEY,
        "MC4CAQAwBQYDK2VwBCIEIA==",
    ),
]

BENIGN = [
    "invoice #20028 was paid on 2024-03-01",
    "Invoice INV-2024-000123 from Acme",
    "ticker NVDA closed at 912.50; BRK.B flat",
    "card ending 4242 expires 09/27",
    "the last four digits are 1111",
    "call +1 (415) 555-0132 after 5pm",
    "order 1234567890123 shipped",  # 13 digits, starts with 1
    "tracking 4111111111111112",  # fails Luhn
    "timestamp 1700000000000 ms",
    "ISBN 978-3-16-148410-0",
    "part number 000-12-3456 and 666-12-3456 and 912-34-5678",
    "date 2024-01-15, room 123-45",
    "we use sk-learn and pk-12 labels",
    "the AKIA prefix marks AWS access keys",
    "git sha 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "the Smith family budget: $12,345.67",
    "IBAN-less account 12345678",
    "xox is a hug",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
]


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_every_secret_is_replaced_by_a_breadcrumb(text: str, kind: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert kind in result.kinds
    assert f"[redacted:{kind}" in result.text


@pytest.mark.parametrize("text", BENIGN)
def test_benign_look_alikes_are_kept(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.kinds == ()


def test_card_breadcrumb_keeps_only_the_last_four() -> None:
    result = redact("pay with 4111 1111 1111 1111 please")
    assert result.text == "pay with [redacted:card_number ending 1111] please"


def test_several_kinds_in_one_text_are_all_reported_once() -> None:
    result = redact("AKIAIOSFODNN7EXAMPLE and 123-45-6789 and 123-45-6780 and 4242424242424242")
    assert set(result.kinds) == {API_KEY, SSN, CARD_NUMBER}
    assert len(result.kinds) == 3
    assert "6789" not in result.text and "6780" not in result.text


def test_redaction_is_idempotent() -> None:
    once = redact(SECRETS[0][0]).text
    assert redact(once).text == once


def test_luhn() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")

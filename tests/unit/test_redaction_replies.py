"""The secret gate reads a message as the reply to the one said before it: the digits of a PIN or a
code that message asked for are found in a reply that gives them alone ("What's the alarm code?"
then "7305"), as on the lines after such a question within one text. A word given alone is left to
the rules that read it alone. Codes that are no secret (a zip, a promo or an error code), a public
key, and replies to what asks for none (a question about a password, a line of code or a link
holding "?") are kept."""

from __future__ import annotations

from redaction_shapes import reply_checks

from memvault.core.redaction import redact

ANSWERED = [
    ("Sure, I can set that up. What is the alarm code?", "7305", "7305"),
    ("What's the PIN for your bank card?", "4821", "4821"),
    ("Which passcode does the tablet use?", "918273", "918273"),
    ("PIN?", "2468", "2468"),
    ("OK.\nWhat's the code they texted you?", "552019", "552019"),
]

KEPT = [
    ("What's your zip code?", "10001"),
    ("What's the promo code on the flyer?", "2024"),
    ("What is the error code on the screen?", "5003"),
    ("Tell me the door code for the back entrance", "4821"),
    ("What's the alarm code?", "max_tokens: 1024"),
    ("How many people are coming to the dinner?", "4821"),
    ("What's the password for the wifi?", "I forgot it, sorry"),
    ("Any questions before we start?", "Lantern8Bay"),
    ("What is a PIN code, anyway?", "1234"),
    ("Which password manager do you use?", "v2.14.0-rc.1+build.5"),
    ("The alarm code is on the fridge.", "7305"),
    ("I forgot my password again, how do I reset it?", "Lantern8Bay"),
    ("What's your SSH key?", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq8nW3zKp5Rv7Lm2Tq8nW3zKp5Rv7Lm2Tq8nW3zKp5R alice@laptop"),
    ('PASSWORD_RE = r"^(?=.*[A-Z])(?=.*\\d).{12,}$"', "Lantern8Bay"),
    ("Password not accepted, see https://support.example.com/mail/?p=BadCredentials", "Lantern8Bay"),
]


(test_a_credential_given_as_the_answer_to_a_question_is_redacted,
 test_a_reply_that_answers_no_credential_is_kept) = reply_checks(ANSWERED, KEPT)


def test_a_reply_keeps_what_the_gate_finds_in_it_alone() -> None:
    gated = redact("my card is 4111 1111 1111 1111 and the PIN is 4821", "How do I pay?")
    assert "4111" not in gated.text and "4821" not in gated.text and "card_number" in gated.kinds

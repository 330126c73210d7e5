"""What a recall leaves out because the request already says it: the request's own texts, whether
memory holds them as sent or as the secret gate stored them."""

from __future__ import annotations

from memvault.core.memory.assemble import without_repeats
from memvault.core.models import SearchItem
from memvault.core.redaction import redact


def item(text: str) -> SearchItem:
    return SearchItem(text, 1.0, "hot", 0.0, 0.0, ["m"], "user", 10, "vault")


def test_a_message_the_request_holds_is_left_out_as_sent_and_as_the_gate_stored_it() -> None:
    said = "Book the ferry for Friday; the booking site's password is Tr0ub4dor&3x-Kq."
    stored = redact(said).text
    assert stored != said  # the gate took the password out when it was stored
    other = "The ferry leaves from pier 4."
    kept = list(without_repeats([item(said), item(stored), item(other)], [said, "What time is it?"]))
    assert [found.text for found in kept] == [other]


def test_a_stored_message_with_a_secret_taken_out_is_kept_when_the_request_does_not_say_it() -> None:
    stored = redact("The gate code to the garage server room is pw: Zq8#mV2!xR.").text
    assert "[redacted:" in stored
    kept = list(without_repeats([item(stored)], ["Where is the garage?"]))
    assert [found.text for found in kept] == [stored]

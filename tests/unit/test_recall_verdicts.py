"""The recall gate's remembered verdicts: a text this process wrote and the gate left unchanged is
not scanned again when it is recalled; a text the gate changed when written, or one never written
here, is scanned at recall, once; and the memory stays bounded."""

from __future__ import annotations

import uuid

import pytest

from memvault.core.memory.write import gated
from memvault.core.models import Message
from memvault.core.redaction import Redaction, recall, redact
from memvault.core.redaction.recall import LONGEST_NOTED, REMEMBERED_VERDICTS, VERDICTS, RecallGate, recalled


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the recall gate scans (runs the rules over)."""
    seen: list[str] = []

    def counted(text: str) -> Redaction:
        seen.append(text)
        return redact(text)

    monkeypatch.setattr(recall, "redact", counted)
    return seen


def written(content: str) -> Message:
    return gated(Message("user", content, 1_700_000_000.0, uuid.uuid4().hex), [])


def test_a_text_written_unchanged_is_not_scanned_again_when_recalled(scans: list[str]) -> None:
    stored = written(f"We planted tulips by the gate on day {uuid.uuid4().hex[:6]}.")
    assert recalled(stored.content) == Redaction(stored.content, ())
    assert RecallGate().text(stored.content) == stored.content
    assert scans == []


def test_a_text_the_gate_changed_when_written_is_scanned_at_recall(scans: list[str]) -> None:
    # The part the gate keeps makes the stored text one no other test stored.
    stored = written(f"For the shed on day {uuid.uuid4().hex[:6]}: my password is Tulip-{uuid.uuid4().hex[:8]}!")
    assert "[redacted:" in stored.content and "shed on day" in stored.content
    gate = RecallGate()
    assert gate.text(stored.content) == stored.content and not gate.changed
    assert scans == [stored.content]


def test_a_text_never_written_here_is_scanned_once(scans: list[str]) -> None:
    secret = f"api_key = sk-{uuid.uuid4().hex}{uuid.uuid4().hex}"
    gate = RecallGate()
    first, again = gate.text(secret), gate.text(secret)
    assert first == again and "[redacted:" in first and gate.changed == 2
    assert scans == [secret]


def test_a_long_text_is_not_noted_when_written(scans: list[str]) -> None:
    stored = written("The orchard. " * (LONGEST_NOTED // 13 + 1) + uuid.uuid4().hex)
    recalled(stored.content)
    assert scans == [stored.content]


def test_the_verdicts_kept_stay_bounded() -> None:
    for index in range(REMEMBERED_VERDICTS + 50):
        written(f"note {index} {uuid.uuid4().hex[:4]}")
    assert len(VERDICTS) == REMEMBERED_VERDICTS

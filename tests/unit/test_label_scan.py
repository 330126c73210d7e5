"""The label rule looks for a credential word first and starts its whole pattern only near one. It
must find exactly what the whole pattern tried at every position finds: on the secret corpus, and
on texts built to sit at the edges of the shortcut (labels as far from their word as a label can
be, case-folded look-alike letters, words the shortcut sees that the pattern then refuses)."""

from __future__ import annotations

import random
import re

import pytest

from memvault.core.redaction import labels, redact
from secret_corpus import HARMLESS, SECRETS

LABEL_WORDS = ["password", "PASSWORD", "Passwd", "pwd", "pw", "secret", "token", "api_key", "apiKey", "AccountKey",
               "credentials", "creds", "auth", "sig", "signature", "pat", "MYSQL_PWD", "client_secret", "mot de passe",
               "пароль", "Kennwort", "paſſword", "\u212aey", "sıgnature", "monkey", "pattern", "design", "passage"]
SEPARATORS = ["=", ": ", " = ", " is ", "\": \"", " ", " for the NAS is ", ":= ", "->", "\t"]
VALUES = ["hunter2x!", "Zq8#kLm2!vR", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "1234", "reset", "the rest of it",
          "'quoted value 9'", "${PASSWORD}", "abc", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"]
FILLERS = ["Abcdefghijklmnopqrstu", "x" * 40, "a.b-c_d", "We", "my old router", "if not", "<b>", "\u00e9t\u00e9", "1"]


def full_scan(text: str) -> list[labels.Hit]:
    """What the rule finds when its whole pattern is tried from every position."""
    saved = labels._LABEL_WORD, labels._LABEL_LEAD
    labels._LABEL_WORD, labels._LABEL_LEAD = re.compile(""), 0
    try:
        return list(labels.assignments(text))
    finally:
        labels._LABEL_WORD, labels._LABEL_LEAD = saved


def built_texts(count: int) -> list[str]:
    rng = random.Random(20261126)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 4)):
            parts += rng.sample(FILLERS, rng.randint(0, 3))
            parts.append(rng.choice(LABEL_WORDS) + rng.choice(SEPARATORS) + rng.choice(VALUES))
        joiner = rng.choice([" ", "  ", "", "\n", ", "])
        texts.append(joiner.join(parts))
    return texts


@pytest.mark.parametrize("family", ["secrets", "look-alikes"])
def test_the_shortcut_finds_what_the_whole_pattern_finds_on_the_corpus(family: str) -> None:
    for case in SECRETS if family == "secrets" else HARMLESS:
        assert list(labels.assignments(case.text)) == full_scan(case.text), case.text


def test_the_shortcut_finds_what_the_whole_pattern_finds_at_its_edges() -> None:
    texts = built_texts(3000)
    found = 0
    for text in texts:
        hits = list(labels.assignments(text))
        assert hits == full_scan(text), text
        found += bool(hits)
    assert 300 < found < len(texts)  # the built texts hold secrets and texts without one


def test_a_label_as_long_as_a_label_can_be_still_gives_its_value_away() -> None:
    label = "Abcdefghijklmnopqrstu Bcdefghijklmnopqrstuv " + "c" * 40 + "password"
    text = "Note: " + label + "=Zq8#kLm2!vR and more"
    assert "Zq8#kLm2!vR" not in redact(text).text
    assert label in redact(text).text
    assert list(labels.assignments(text)) == full_scan(text)


def test_a_condition_as_far_from_its_word_as_a_label_allows_still_marks_code() -> None:
    # ``unless`` opens the longest label a condition can lead: the colon after it opens a block.
    text = "unless Abcdefghijklmnopqrstu " + "c" * 40 + "password: hunter2x!"
    assert redact(text).text == text
    assert list(labels.assignments(text)) == full_scan(text) == []


def test_text_without_any_credential_word_is_kept_whole() -> None:
    text = "We walked along the beach at dawn and talked about the summer plans. " * 20
    assert redact(text).text == text and not redact(text).redacted

"""The two checks a table of secret shapes and look-alikes gets: each secret is cut out of its text
(and named as a kind), each look-alike comes back verbatim; and the same two for replies, each read
after the message it answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from memvault.core.redaction import redact


def shape_checks(
    secrets: Sequence[tuple[str, str]], look_alikes: Sequence[str]
) -> tuple[Callable[[str, str], None], Callable[[str], None]]:
    """The two test functions for ``secrets`` (text, the secret in it) and ``look_alikes``, to be
    bound to test names in the module holding the tables."""

    @pytest.mark.parametrize(("text", "secret"), secrets, ids=range(len(secrets)))
    def each_shape_loses_its_secret(text: str, secret: str) -> None:
        result = redact(text)
        assert secret not in result.text, result.text
        assert result.kinds

    @pytest.mark.parametrize("text", look_alikes, ids=range(len(look_alikes)))
    def each_look_alike_comes_back_verbatim(text: str) -> None:
        assert redact(text).text == text

    return each_shape_loses_its_secret, each_look_alike_comes_back_verbatim


def reply_checks(
    answered: Sequence[tuple[str, str, str]], kept: Sequence[tuple[str, str]]
) -> tuple[Callable[[str, str, str], None], Callable[[str, str], None]]:
    """``shape_checks`` for replies: ``answered`` (the message asked, the reply, the secret in it)
    and ``kept`` (the message asked, a reply that gives no secret)."""

    @pytest.mark.parametrize(("asked", "reply", "secret"), answered, ids=range(len(answered)))
    def each_answer_loses_its_secret(asked: str, reply: str, secret: str) -> None:
        gated = redact(reply, asked)
        assert secret not in gated.text and gated.kinds, gated.text

    @pytest.mark.parametrize(("asked", "reply"), kept, ids=range(len(kept)))
    def each_kept_reply_comes_back_verbatim(asked: str, reply: str) -> None:
        assert redact(reply, asked).text == reply

    return each_answer_loses_its_secret, each_kept_reply_comes_back_verbatim

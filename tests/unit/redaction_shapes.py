"""The two checks a table of secret shapes and look-alikes gets: each secret is cut out of its text
(and named as a kind), each look-alike comes back verbatim."""

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

"""The secret gate at recall: text stored before a rule existed (or by a version without the gate)
passes it again on its way out, so no read surface hands a secret back. Recalled texts repeat from
call to call, so a text's verdict is remembered (by content, bounded)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache

from memvault.core.models import SearchItem
from memvault.core.redaction import Redaction, redact
from memvault.core.tokens import estimate_tokens

# Texts whose verdicts are remembered: a few calls' worth of recalled passages (~300 tokens each).
REMEMBERED_VERDICTS = 2048


@lru_cache(maxsize=REMEMBERED_VERDICTS)
def recalled(text: str) -> Redaction:
    """``text`` as it may leave the store."""
    return redact(text)


@dataclass
class RecallGate:
    """Counts, over one recall, the items the gate changed and the kinds of secret it found."""

    changed: int = 0
    kinds: set[str] = field(default_factory=set)
    ms: float = 0.0  # spent on the gate itself

    def items(self, found: Iterable[SearchItem]) -> Iterator[SearchItem]:
        """``found`` through the gate, lazily: only the items a budget takes are read. A changed
        item's token count is its redacted text's."""
        for item in found:
            started = time.perf_counter()
            gate = recalled(item.text)
            self.ms += (time.perf_counter() - started) * 1000.0
            if not gate.redacted:
                yield item
                continue
            self.changed += 1
            self.kinds.update(gate.kinds)
            yield replace(item, text=gate.text, tokens=estimate_tokens(gate.text))

    def text(self, text: str) -> str:
        gate = recalled(text)
        if gate.redacted:
            self.changed += 1
            self.kinds.update(gate.kinds)
        return gate.text

"""The secret gate at recall: text stored before a rule existed (or by a version without the gate)
passes it again on its way out, so no read surface hands a secret back. Recalled texts repeat from
call to call, so a text's verdict is remembered (by content, bounded); so is the verdict on a text
this process wrote that the gate left as it was: the gate is a function of the text alone, so at
recall it would find nothing again."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from memvault.core.models import SearchItem
from memvault.core.redaction import Redaction, redact
from memvault.core.tokens import estimate_tokens

# Texts whose verdicts are remembered: a few calls' worth of recalled passages (~300 tokens each),
# or of messages just written.
REMEMBERED_VERDICTS = 2048
# Characters: a longer text written is not remembered as it is written (it may be recalled never).
LONGEST_NOTED = 4096


class _Verdicts:
    """Verdicts by text, the least recently used let go past ``size``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[str, Redaction] = OrderedDict()
        self._lock = threading.Lock()  # the gate runs on worker threads too

    def __len__(self) -> int:
        return len(self._kept)

    def of(self, text: str) -> Redaction:
        with self._lock:
            found = self._kept.get(text)
            if found is not None:
                self._kept.move_to_end(text)
                return found
        found = redact(text)
        self.keep(text, found)
        return found

    def keep(self, text: str, verdict: Redaction) -> None:
        with self._lock:
            self._kept[text] = verdict
            self._kept.move_to_end(text)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)


VERDICTS = _Verdicts(REMEMBERED_VERDICTS)


def recalled(text: str) -> Redaction:
    """``text`` as it may leave the store."""
    return VERDICTS.of(text)


def passed_when_written(written: Redaction) -> None:
    """Note the gate's verdict on a text as it was written: one it left unchanged needs no second
    look when it is recalled while this process remembers it."""
    if not written.redacted and len(written.text) <= LONGEST_NOTED:
        VERDICTS.keep(written.text, written)


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

"""What one call used, as one value (``CallUsage``): the provider's own token counts, the memory
injected and stored, the embeddings computed and the searches run. Embeddings are counted where
they are computed, by the ``MeteredEmbedder`` every composition root wraps its embedder in: work
run inside ``metering()`` adds what it embeds to that call's meter, and nothing else does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace

from memvault.core.models import UsageNote
from memvault.core.ports import Embedder
from memvault.core.shapes import doc
from memvault.core.tokens import estimate_tokens

_PROVIDER = " as the provider's answers reported them (0 for an answer that reported none)."


@dataclass(frozen=True)
class CallUsage:
    """What calls used: one call's counts (what it adds to its key's day), or their sum."""

    calls: int = field(default=0, metadata=doc("Calls routed to a provider."))
    input_tokens: int = field(default=0, metadata=doc("Provider input tokens" + _PROVIDER))
    output_tokens: int = field(default=0, metadata=doc("Provider output tokens" + _PROVIDER))
    cached_tokens: int = field(default=0, metadata=doc("Provider input tokens read from its prompt cache" + _PROVIDER))
    memory_tokens: int = field(default=0, metadata=doc("Tokens of memory injected into routed calls."))
    messages_stored: int = field(default=0, metadata=doc("Messages stored (routed turns and stores)."))
    tokens_stored: int = field(default=0, metadata=doc("Tokens of the messages stored."))
    embeddings: int = field(default=0, metadata=doc(
        "Texts embedded (chunks, messages and queries; an embedding the cache answered is not counted)."))
    embedding_tokens: int = field(default=0, metadata=doc("Tokens of the texts embedded."))
    searches: int = field(default=0, metadata=doc("Memory searches (the router's recalls and search calls)."))

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    @property
    def provider_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def counts(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


COUNTS = tuple(f.name for f in fields(CallUsage))


def usage_note(moment: float, usage: CallUsage) -> UsageNote | None:
    """``usage`` as a vault write logs it for the ledger; None when it counts nothing."""
    counts = {name: count for name, count in usage.counts().items() if count}
    return UsageNote(moment, counts) if counts else None


def noted_usage(note: UsageNote) -> CallUsage:
    """The counts of a logged note (a name this version does not know is left out)."""
    return CallUsage(**{name: int(count) for name, count in note.counts.items() if name in COUNTS})


class Meter:
    """Embeddings computed for one call, added up as they happen."""

    def __init__(self) -> None:
        self.usage = CallUsage()

    def add(self, usage: CallUsage) -> None:
        self.usage = self.usage + usage


_current: ContextVar[Meter | None] = ContextVar("memvault_usage_meter", default=None)


@contextlib.contextmanager
def metering() -> Iterator[Meter]:
    """A fresh meter for the work run inside this block (tasks it starts inherit it)."""
    meter = Meter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


class MeteredEmbedder:
    """The ``Embedder`` port around another, noting each text it embeds on the current meter."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await self.inner.embed(texts)
        meter = _current.get()
        if meter is not None and texts:
            meter.add(CallUsage(embeddings=len(texts), embedding_tokens=sum(estimate_tokens(t) for t in texts)))
        return vectors

    def __getattr__(self, name: str) -> object:
        # Adapter-specific extras (a local model's thread-bound embedding, its close) pass through.
        return getattr(self.inner, name)


def with_embeddings(usage: CallUsage, meter: Meter) -> CallUsage:
    return replace(usage, embeddings=usage.embeddings + meter.usage.embeddings,
                   embedding_tokens=usage.embedding_tokens + meter.usage.embedding_tokens)

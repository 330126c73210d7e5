"""CPU-heavy work kept off the event loop where the platform allows it. The secret gate reads
about 4.5 microseconds a character: over a write of a megabyte, or thousands of messages, that is
seconds in which one event loop answers no other caller, health checks included. Locally such
work runs on a worker thread (``adapters/local/cpu.py``), and the loop goes on between the
interpreter's thread switches. A Worker has no threads and serves concurrent requests in their
own isolates, so there it runs in place (``InlineCpu``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from memvault.core.deps import Deps

T = TypeVar("T")

# Smaller work runs in place: handing it to a thread and back costs more than it takes (the gate
# reads 20,000 characters in about 90 ms on a 2-core machine).
OFF_LOOP_CHARS = 20_000


class InlineCpu:
    async def run(self, work: Callable[[], T]) -> T:
        return work()


async def gated_off_loop(deps: Deps, work: Callable[[], T], chars: int) -> T:
    """``work()`` (reading ``chars`` characters of text), off the event loop when it is large."""
    return await deps.cpu.run(work) if chars >= OFF_LOOP_CHARS else work()

"""The type of the root conftest's ``make_deps`` factory, for tests that take it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from memvault.core.deps import Deps
from memvault.core.tuning import Tuning


class MakeDeps(Protocol):
    def __call__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        tuning: Tuning | None = None,
        clock: Callable[[], float] | None = None,
        data: Path | None = None,
    ) -> Deps: ...

"""Stand-in for the runtime's import patch manager: ``register_exec_patch(name)`` registers a
context manager that wraps the execution of module ``name`` when it is first imported, as the
runtime's does, so the SDK's own patches (anyio running "threaded" work inline: the runtime has
no threads) apply here as in production."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], AbstractContextManager[None]]
_EXEC_PATCHES: dict[str, Patch] = {}


def register_exec_patch(name: str) -> Callable[[Patch], Patch]:
    def register(patch: Patch) -> Patch:
        _EXEC_PATCHES[name] = patch
        return patch

    return register


class _PatchedLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, patch: Patch) -> None:
        self._loader, self._patch = loader, patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        with self._patch(module):
            self._loader.exec_module(module)


class _PatchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        patch = _EXEC_PATCHES.get(name)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = getattr(finder, "find_spec", lambda *_: None)(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchedLoader(spec.loader, patch)
                return spec
        return None


sys.meta_path.insert(0, _PatchFinder())

"""Stand-in for the ``workers`` module of Python Workers, inside the Pyodide tier only: just the
``DurableObject`` and ``WorkerEntrypoint`` base classes, so the real Vault Durable Object class and
the Worker entry can be constructed with a stand-in ``ctx`` and ``env``."""

from __future__ import annotations

from typing import Any


class DurableObject:
    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


class WorkerEntrypoint:
    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env

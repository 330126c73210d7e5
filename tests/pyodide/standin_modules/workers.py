"""Stand-in for the ``workers`` module of Python Workers, inside the Pyodide tier only: just the
``DurableObject`` base class, so the real Vault Durable Object class can be constructed with a
stand-in ``ctx`` and ``env``."""

from __future__ import annotations

from typing import Any


class DurableObject:
    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env

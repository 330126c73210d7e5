"""Fixtures of the memory API tests (their helpers live in memory_support.py)."""

from memory_support import memvault

__all__ = ["memvault"]

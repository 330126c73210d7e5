"""Fixtures of the client tests (their helpers live in client_support.py)."""

from client_support import memvault

__all__ = ["memvault"]

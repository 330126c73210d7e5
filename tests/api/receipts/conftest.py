"""Fixtures of the receipt tests: the memory API's in-process memvault."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))

from memory_support import memvault

__all__ = ["memvault"]

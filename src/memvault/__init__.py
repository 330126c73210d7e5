"""memvault: a memory layer for LLM applications."""

__version__ = "0.1.0"

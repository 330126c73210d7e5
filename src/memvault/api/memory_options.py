"""The memory router's per-call options and results as HTTP headers: ``X-Memory-*`` and
``X-Session-ID`` in (or the same options in the body's ``memvault`` object, for clients that cannot
set headers), ``X-Memory-*`` out. Core checks the options (``core.memory.chat_calls.OPTIONS``) and sees
only ``MemoryOptions`` and ``PreparedMemory``."""

from __future__ import annotations

from collections.abc import Mapping

from memvault.api.dependencies import SESSION_ID_HEADER, header
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import MemoryOptions, PreparedMemory, memory_options

# Each option and the header that sets it; a header wins over the body's object.
HEADERS = {
    "mode": "X-Memory-Mode",
    "context_limit": "X-Memory-Context-Limit",
    "store": "X-Memory-Store",
    "store_response": "X-Memory-Store-Response",
    "session_id": SESSION_ID_HEADER,
    "brain": "X-Memory-Brain",
}
BODY_OBJECT = "memvault"


def parse_options(headers: Mapping[str, str], default_context_limit: int, given: object = None) -> MemoryOptions:
    """The options of one call: its headers (``headers`` looks names up case-insensitively), and
    where a header is absent, the body's ``memvault`` object (``given``)."""
    options, labels = _body_options(given)
    for option, name in HEADERS.items():
        value = header(headers, name)
        if value is not None:
            options[option], labels[option] = value, name
    return memory_options(options, default_context_limit, labels)


def _body_options(given: object) -> tuple[dict[str, object], dict[str, str]]:
    if given is None:
        return {}, {}
    if not isinstance(given, dict):
        raise InvalidInput(f"`{BODY_OBJECT}` must be an object")
    unknown = sorted(set(given) - set(HEADERS))
    if unknown:
        raise InvalidInput(f"`{BODY_OBJECT}` has unknown fields: {', '.join(unknown)}; known: {', '.join(HEADERS)}")
    options = {option: value for option, value in given.items() if value is not None}
    return options, {option: f"`{BODY_OBJECT}.{option}`" for option in options}

# The id of the call's receipt (`GET /v1/memory/receipts/{id}`).
RECEIPT_HEADER = "X-Memory-Receipt"


def memory_headers(memory: PreparedMemory) -> dict[str, str]:
    headers = {
        "X-Memory-Status": memory.status,
        "X-Memory-Items": str(memory.items),
        "X-Memory-Tokens": str(memory.tokens),
        "X-Memory-Retrieval-Ms": f"{memory.retrieval_ms:.1f}",
    }
    if memory.receipt is not None:
        headers[RECEIPT_HEADER] = memory.receipt
    return headers

"""One reader of a JSON-RPC message for both MCP transports, stricter than the SDK's own: a
message the SDK would misread is answered here with JSON-RPC's error instead.

- The SDK reads a request whose ``id`` is not a string or an integer (an object, an array, null,
  a fraction, a boolean) as a notification and answers nothing, so its client waits forever;
  JSON-RPC calls it an invalid request, answered under ``id: null``.
- A batch (a JSON array) is one invalid request: MCP 2025-06-18 removed batches.
- Text that is not UTF-8 is a parse error, not text with replacement characters in it.

The errors' messages name no part of what was sent, which may hold anything."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

NOT_JSON_RPC = "Invalid request: not a JSON-RPC 2.0 message"
NO_BATCHES = "Invalid request: batches are not supported (MCP 2025-06-18 removed them)"
BAD_ID = "Invalid request: an id is a string or an integer"
NOT_INITIALIZED = "Invalid request: the session is not initialized; send initialize first"
# What a client may ask before ``initialize`` (MCP's lifecycle: pings, and the handshake itself).
BEFORE_INITIALIZE = frozenset({"initialize", "ping"})


@dataclass(frozen=True)
class Refusal:
    """What answers a message memvault does not serve (unlike a client's own error message)."""

    answer: JSONRPCError


def refused(code: int, message: str, request_id: int | str | None = None) -> Refusal:
    return Refusal(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message)))


def not_initialized(request_id: int | str) -> Refusal:
    return refused(INVALID_REQUEST, NOT_INITIALIZED, request_id)


def too_long(limit: int) -> Refusal:
    return refused(INVALID_REQUEST, f"Invalid request: a message is larger than {limit} bytes")


def is_request_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def read_message(data: bytes) -> JSONRPCMessage | Refusal:
    """The message ``data`` holds, or the refusal that answers it."""
    try:
        sent = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError:
        return refused(PARSE_ERROR, "Parse error")
    if isinstance(sent, list):
        return refused(INVALID_REQUEST, NO_BATCHES)
    if not isinstance(sent, dict):
        return refused(INVALID_REQUEST, NOT_JSON_RPC)
    # An error answering a message whose id could not be read carries id null.
    if "id" in sent and not is_request_id(sent["id"]) and not (sent["id"] is None and "error" in sent):
        return refused(INVALID_REQUEST, BAD_ID)
    try:
        return jsonrpc_message_adapter.validate_python(sent, by_name=False)
    except ValidationError:
        return refused(INVALID_REQUEST, NOT_JSON_RPC, sent.get("id"))

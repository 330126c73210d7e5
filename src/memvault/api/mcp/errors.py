"""Domain errors as MCP answers: a tool's failure is a tool result marked ``isError`` (so the model
reads why), a resource's a JSON-RPC error; neither ever ends the session."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from memvault.core.errors import MemvaultError

log = logging.getLogger("memvault.mcp")
UNEXPECTED = "memvault failed to answer this call"


def describe(error: MemvaultError) -> str:
    return f"{error.code}: {error.message}"


def tool_refusal(error: MemvaultError) -> Exception:
    return ToolError(describe(error))


def resource_refusal(error: MemvaultError) -> Exception:
    code = INVALID_PARAMS if error.status < 500 else INTERNAL_ERROR
    return MCPError(code=code, message=describe(error), data={"code": error.code})


@contextmanager
def refused_as(refusal: Callable[[MemvaultError], Exception]) -> Iterator[None]:
    """Run one MCP call, answering a domain error with its own message and anything else with a
    generic one; the type alone is logged, since an exception's text may quote stored memory."""
    try:
        yield
    except MemvaultError as exc:
        raise refusal(exc) from None
    except Exception as exc:
        log.error("unexpected %s in an MCP call", type(exc).__name__)
        raise refusal(MemvaultError(UNEXPECTED)) from None

"""The API's document, from the same definitions that check requests: the memory operations'
request and result schemas are generated from core's commands and results (``core/contract.py``,
``core/shapes.py``), so a route documents exactly what its one parser takes. Errors share one
envelope."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field

from memvault.core.admin import OPERATIONS as ADMIN_OPERATIONS
from memvault.core.answers import RECEIPT as ANSWER_RECEIPT
from memvault.core.answers import SEARCH as ANSWER_SEARCH
from memvault.core.contract import COMPONENTS, Spec, spec_schemas
from memvault.core.memory.operations import OPERATIONS
from memvault.core.shapes import result_schema
from memvault.core.usage.operations import OPERATIONS as USAGE_OPERATIONS


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable name, e.g. `invalid_request`, `conflict`.")
    message: str = Field(description="What was wrong, naming the field where there is one.")


class ErrorBody(BaseModel):
    error: ErrorDetail


_MEANINGS = {
    400: "Malformed request: unreadable JSON, a broken rule.",
    401: "No credential, or one nobody issued.",
    403: "A known credential asking for what it may not do.",
    404: "Absent, or behind a wall (never told apart).",
    409: "Contradicts what is stored (e.g. a message id already used for other text).",
    413: "Body larger than the limit.",
    422: "A field's value is out of its domain; the message names the field.",
    503: "A store could not answer; nothing was half-written.",
    507: "A store is full; nothing of the write was stored.",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, object]]:
    """OpenAPI entries of the errors a route may answer, all in the ``{"error": …}`` envelope."""
    return {status: {"model": ErrorBody, "description": _MEANINGS[status]} for status in statuses}


NDJSON = {"application/x-ndjson": {"schema": {"type": "string", "description": "One JSON object per line."}}}


class Documented(Protocol):
    """An operation as its route documents it: what it takes and what it answers."""

    @property
    def request(self) -> Spec: ...

    @property
    def result(self) -> type: ...


def memory_schemas() -> dict[str, dict[str, Any]]:
    """The components every memory and admin operation's request and result refer to, by name."""
    operations: list[Documented] = [*OPERATIONS, ANSWER_SEARCH, ANSWER_RECEIPT, *ADMIN_OPERATIONS, *USAGE_OPERATIONS]
    schemas = spec_schemas(operation.request for operation in operations if operation.request.rules)
    for operation in operations:
        if operation.result is not dict:
            schemas.update(result_schema(operation.result))
    return schemas


def documented(operation: Documented, *, body: bool = False, query: tuple[str, ...] = ()) -> dict[str, Any]:
    """What a route of ``operation`` adds to its OpenAPI operation: its JSON body or its query
    parameters, as the operation's request defines them, and its answer."""
    extra: dict[str, Any] = {"responses": {"200": {"content": {"application/json": {
        "schema": {"$ref": COMPONENTS + operation.result.__name__}}}}}}
    if body:
        extra["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"$ref": COMPONENTS + operation.request.name}}}}
    if query:
        extra["parameters"] = [
            {"name": rule.name, "in": "query", "required": rule.required, "schema": rule.schema(),
             "description": rule.description}
            for rule in (operation.request.rule(name) for name in query)
        ]
    return extra

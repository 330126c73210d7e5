"""Request and response bodies of the memory API, for OpenAPI and a first shape check. The rules
themselves (roles, times, ids) are core's, applied by the one normaliser every surface calls."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from memvault.core.models import Role, SearchItem


class MessageIn(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    role: Role
    content: StrictStr = Field(min_length=1)
    timestamp: StrictFloat | StrictInt | StrictStr | None = Field(
        default=None, description="Epoch seconds or ISO 8601 (naive means UTC); defaults to now."
    )
    id: StrictStr | None = Field(default=None, max_length=200, description="Your id; one is assigned if absent.")
    remember: StrictBool = Field(default=True, alias="memory", description="false: accepted, never stored.")
    model: StrictStr | None = None
    metadata: dict[str, object] | None = Field(
        default=None, description="An object kept with the message and returned when memory is read (at most 4096 characters as JSON)."
    )


class StoreRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "messages": [
            {"role": "user", "content": "My cat is called Biscuit.", "timestamp": "2025-03-14T09:30:00Z"},
            {"role": "assistant", "content": "Biscuit is a lovely name for a cat.", "timestamp": "2025-03-14T09:30:04Z"},
        ],
        "metadata": {"channel": "web"},
    }]})

    messages: list[MessageIn] = Field(min_length=1, max_length=10_000)
    metadata: dict[str, object] | None = Field(
        default=None, description="Kept with every message of the batch, beneath each message's own metadata keys."
    )


class StoreResponse(BaseModel):
    message_ids: list[str | None] = Field(
        description="Per message sent, in order: the id it is stored under (null if marked memory: false)."
    )
    messages_accepted: int
    messages_stored: int
    chunks_stored: int
    tokens_buffered: int
    updated_at: float = Field(description="When the vault took the write, in epoch seconds.")
    redactions: list[str]
    mirrored: bool


class MemoryPage(BaseModel):
    session_id: str | None
    offset: int
    limit: int
    items: list[dict[str, object]] = Field(
        description="Newest first: {state (pending or stored), id, role, content, timestamp, model, metadata}."
    )


class SearchRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"query": "what is my cat called?", "budget_tokens": 1000}]})

    query: StrictStr = Field(min_length=1, max_length=20_000)
    limit: StrictInt | None = Field(default=None, ge=1, le=500)
    budget_tokens: StrictInt | None = Field(default=None, ge=1, le=200_000)
    now: StrictFloat | StrictInt | StrictStr | None = Field(
        default=None, description="The moment recency is measured from: epoch seconds or ISO 8601."
    )
    session_id: StrictStr | None = Field(default=None, min_length=1, max_length=200)


class SearchResponse(BaseModel):
    items: list[SearchItem]
    tokens: int
    metrics: dict[str, object]


class PurgeRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"older_than": "2024-01-01T00:00:00Z"}]})

    older_than: StrictFloat | StrictInt | StrictStr = Field(description="Epoch seconds or ISO 8601.")


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

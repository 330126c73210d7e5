"""Request and response bodies of the memory API: one place for their validation rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator

from memvault.core.models import SearchItem

Role = Literal["user", "assistant", "system", "tool"]


def parse_timestamp(value: float | int | str | None) -> float | None:
    """Epoch seconds, or an ISO 8601 string (a naive one is taken as UTC)."""
    if value is None or isinstance(value, (int, float)):
        return None if value is None else float(value)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("timestamp must be epoch seconds or ISO 8601") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class MessageIn(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    role: Role
    content: StrictStr = Field(min_length=1)
    timestamp: StrictFloat | StrictInt | StrictStr | None = None
    id: StrictStr | None = Field(default=None, max_length=200)
    remember: StrictBool = Field(default=True, alias="memory")
    model: StrictStr | None = None

    @field_validator("timestamp")
    @classmethod
    def _timestamp(cls, value: float | int | str | None) -> float | None:
        return parse_timestamp(value)


class StoreRequest(BaseModel):
    messages: list[MessageIn] = Field(min_length=1, max_length=10_000)


class StoreResponse(BaseModel):
    messages_accepted: int
    messages_stored: int
    chunks_stored: int
    tokens_buffered: int
    redactions: list[str]
    mirrored: bool


class SearchRequest(BaseModel):
    query: StrictStr = Field(min_length=1, max_length=20_000)
    limit: StrictInt | None = Field(default=None, ge=1, le=500)
    budget_tokens: StrictInt | None = Field(default=None, ge=1, le=200_000)
    now: StrictFloat | StrictInt | StrictStr | None = None
    session_id: StrictStr | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("now")
    @classmethod
    def _now(cls, value: float | int | str | None) -> float | None:
        return parse_timestamp(value)


class SearchResponse(BaseModel):
    items: list[SearchItem]
    tokens: int
    metrics: dict[str, object]


class PurgeRequest(BaseModel):
    older_than: StrictFloat | StrictInt | StrictStr

    @field_validator("older_than")
    @classmethod
    def _older_than(cls, value: float | int | str) -> float | None:
        return parse_timestamp(value)

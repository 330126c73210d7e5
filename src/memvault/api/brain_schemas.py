"""Request bodies of the brain routes, for OpenAPI and a first shape check. The core functions
check everything again, because RPC callers reach them without FastAPI."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from memvault.core.brain.rows import EntryType

SCOPE_HELP = "One of the scopes this deployment walls facts by; the credential must hold it."


class FactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str | None = Field(None, description="The fact; secrets in it are redacted before storage.")
    fact: str | None = Field(None, description="Alias of content.")
    source: str | None = Field(None, description="Where the fact comes from, e.g. `files:notes/a.md`.")
    scope: str | None = Field(None, description=SCOPE_HELP)
    entry_type: EntryType | None = None
    source_tier: int | None = Field(None, ge=0, le=9, description="0 is the most authoritative source.")
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    valid_from: float | str | None = Field(None, description="Unix seconds or ISO 8601; defaults to now.")
    pinned: bool | None = Field(None, description="Pinned facts form the recall core.")
    supersedes: str | None = Field(None, description="Id of the fact this one replaces.")
    importance: int | None = Field(None, description="1 (trivia) to 5 (essential); without it the brain's LLM rates it, or 3.")


class WriteRequest(FactIn):
    """One fact (the fields above) or a batch in `facts`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "source": "notes:family", "scope": "family",
        "facts": [{"content": "Aunt Mildred's birthday is on 14 July.", "pinned": True},
                  {"content": "The cabin at Lake Orta has a green door.", "valid_from": "2024-06-01T00:00:00Z"}],
    }]})

    facts: list[FactIn] | None = None
    reconcile: bool | None = Field(None, description="Retire current facts of the batch's sources it no longer holds.")
    source_prefix: str | None = Field(None, description="Reconcile everything under this source prefix.")


class SkillIn(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "slug": "pay-invoice", "scope": "business", "name": "Pay an invoice",
        "content": "1. Check the invoice against the ledger.\n2. Pay by bank transfer.\n3. File the receipt.",
    }]})

    slug: str
    content: str
    name: str | None = None
    description: str | None = None
    scope: str | None = Field(None, description=SCOPE_HELP)


class SyncRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"direction": "pull", "source": "files:", "since": "2025-01-01T00:00:00Z"},
    ]})

    direction: Literal["push", "pull"]
    source: str = Field(description="Source prefix the sync covers, e.g. `files:`.")
    since: float | str | None = None
    items: list[FactIn] | None = None


class ConsolidateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"dryRun": True, "scopes": ["family"]}]})

    dryRun: StrictBool | None = Field(None, description="Default true: only report what a run would propose; false stores the proposals and re-embeds changed facts.")
    scopes: list[str] | None = Field(None, description="Some of the credential's scopes; default all of them.")

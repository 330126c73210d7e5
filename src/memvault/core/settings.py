"""Every setting is defined here once: its field in ``Settings`` carries the default (as the
environment would spell it), the help text and the parser. Values come from a mapping
(environment variables locally, the Worker's ``env`` vars on Cloudflare); the variable of field
``chunk_tokens`` is ``MEMVAULT_CHUNK_TOKENS``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from memvault.core.errors import InvalidInput

T = TypeVar("T")
PREFIX = "MEMVAULT_"
# Scope names are stored in every fact row, vector metadata and cache key: keep them plain.
SCOPE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _text(raw: str) -> str:
    return raw


def _count(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise ValueError("must be a positive whole number")
    return value


def _whole(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError("must not be negative")
    return value


def _hours(raw: str) -> float:
    return float(raw) * 3600.0


def _days(raw: str) -> float:
    return float(raw) * 86400.0


def _weight(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 10.0:
        raise ValueError("must be between 0 and 10")
    return value


def _similarity(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be a cosine similarity between 0 and 1")
    return value


def _switch(raw: str) -> bool:
    if raw.strip().lower() not in ("on", "off", "true", "false", "1", "0"):
        raise ValueError("must be on or off")
    return raw.strip().lower() in ("on", "true", "1")


def _days_by_kind(raw: str) -> tuple[tuple[str, float], ...]:
    """``kind=days`` pairs separated by commas, in seconds."""
    out = []
    for part in raw.split(","):
        kind, _, days = part.partition("=")
        if not kind.strip() or float(days) <= 0:
            raise ValueError("must be kind=days pairs with positive days")
        out.append((kind.strip(), float(days) * 86400.0))
    return tuple(out)


def _names(separator: str) -> Callable[[str], tuple[str, ...]]:
    def parse(raw: str) -> tuple[str, ...]:
        return tuple(part.strip() for part in raw.split(separator) if part.strip())

    return parse


def _scope_names(raw: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in raw.split(",") if part.strip())
    if not names:
        raise ValueError("must name at least one scope")
    if len(set(names)) != len(names):
        raise ValueError("names a scope twice")
    bad = [name for name in names if not SCOPE_NAME.fullmatch(name)]
    if bad:
        raise ValueError(f"scope names are 1-64 characters of a-z, 0-9, '_' or '-': {bad[0]!r} is not")
    return names


def setting(default: str, help: str, parse: Callable[[str], T]) -> T:
    """One field of ``Settings``."""
    return field(default=parse(default), metadata={"default": default, "help": help, "parse": parse})


@dataclass(frozen=True)
class Settings:
    data_dir: str = setting(".memvault", "Local mode: folder holding vault files, the mirror and blobs.", _text)
    embedder: str = setting("minilm", "Local embedder: `minilm` (all-MiniLM-L6-v2 int8 ONNX) or `hash` (tests only).", _text)
    embedding_model: str = setting("@cf/baai/bge-base-en-v1.5", "Workers AI embedding model.", _text)
    chunk_tokens: int = setting("300", "Target size of a stored chunk, in tokens.", _count)
    chunk_overlap_tokens: int = setting("30", "Tokens repeated between consecutive chunks.", _whole)
    hot_window_hours: float = setting("4", "Recency window `hot`, in hours.", _hours)
    working_window_days: float = setting("3", "Recency window `working`, in days.", _days)
    long_term_window_days: float = setting("90", "Recency window `long_term`, in days; older chunks are purged nightly.", _days)
    recency_weight: float = setting("0.25", "How much recency lifts a memory's score: up to 1 + this for one from just now, halving with every working window of age.", _weight)
    search_limit: int = setting("20", "Default number of results of a brain search (conversation-memory search fills its token budget instead, capped only by a `limit` the caller gives).", _count)
    search_budget_tokens: int = setting("1000", "Default token budget of a search result.", _count)
    read_page_size: int = setting("50", "Default number of messages one `get_memory` page holds.", _count)
    race_timeout_ms: int = setting("1500", "How long retrieval waits for vault or mirror (and brain hybrid search for its vector channel) before giving up.", _count)
    mirror_head_start_ms: int = setting("150", "Head start the vault gets before the mirror is also asked (the mirror is asked at once if the vault fails).", _whole)
    vector_memory_mb: int = setting("64", "Most memory one vault's vector codes may take (8 + dimension/8 bytes a row); past it the codes are read in pages on each search.", _count)
    embed_batch: int = setting("256", "Texts per embedding call when storing (the embedder batches them further by length).", _count)
    max_body_bytes: int = setting("1048576", "Largest request body memvault's own routes accept, in bytes.", _count)
    max_provider_body_bytes: int = setting("20971520", "Largest request body the memory router's provider routes accept, in bytes (inline images and documents travel in it; wrangler.toml sets 8 MiB, within an isolate's 128 MB).", _count)
    buffer_idle_hours: float = setting("24", "Nightly cron flushes pending buffers idle for longer than this.", _hours)
    brain_credentials: str = setting("{}", "Brain credentials as JSON: `{\"<sha256 hex of token>\": {\"name\": \"...\", \"scopes\": [\"business\"], \"writer\": false}}`; only writers may write.", _text)
    access_team_domain: str = setting("", "Cloudflare Access: the team domain, `https://<team>.cloudflareaccess.com`. Set (with `MEMVAULT_ACCESS_AUD`), a request that carries no brain credential may sign in with the token Access adds to it; empty turns Access sign-in off.", _text)
    access_aud: tuple[str, ...] = setting("", "Cloudflare Access: the Application Audience (AUD) tag of the Access application in front of memvault (several separated by `,`); a token for any other application is refused.", _names(","))
    access_users: str = setting("{}", "Cloudflare Access: JSON mapping each email Access may vouch for to the `name` of one credential in `MEMVAULT_BRAIN_CREDENTIALS`, whose scopes and writer flag the user gets: `{\"alice@example.com\": \"family-reader\"}`. A verified email not listed gets 403.", _text)
    access_keys_ttl_seconds: int = setting("3600", "Cloudflare Access: how long the team's signing keys are kept before they are fetched again (a token naming an unknown key refetches them at most once a minute).", _count)
    brain_scopes: tuple[str, ...] = setting("business,family,shared,mildred", "The brain's scopes, separated by `,` (names of a-z, 0-9, `_`, `-`): every fact and skill belongs to one, and credentials are granted some of them. Any number works: a read binds its wall as one parameter.", _scope_names)
    brain_hook_chars: int = setting("600", "Longest fact kept inline in the brain; a longer body goes to the blob store and the row keeps this many characters as its hook.", _count)
    brain_max_batch: int = setting("500", "Most facts one brain write may carry.", _count)
    brain_block_similarity: float = setting("0.95", "Write-time bands: a new fact this similar to a current fact of its scope, with the same numbers, codes and names, is not stored (the answer names the existing fact).", _similarity)
    brain_flag_similarity: float = setting("0.80", "Write-time bands: from this similarity the brain's LLM decides contradiction, replace, merge or keep both.", _similarity)
    brain_candidate_similarity: float = setting("0.60", "Write-time bands: from this similarity the brain's LLM checks for a contradiction only.", _similarity)
    brain_llm_url: str = setting("", "Local mode: base URL of an OpenAI-compatible server (Ollama, llama-server, vLLM) the brain's bands and consolidation ask; empty runs only the exact-duplicate band.", _text)
    brain_llm_model: str = setting("", "Model the brain's LLM runs: a name the local server knows, or on Workers a Workers AI text model (for example `@cf/meta/llama-3.1-8b-instruct`); empty turns the LLM off.", _text)
    brain_llm_api_key: str = setting("", "Local mode: bearer key for `MEMVAULT_BRAIN_LLM_URL`, if the server wants one (a secret).", _text)
    brain_llm_timeout_ms: int = setting("20000", "How long one answer of the brain's LLM may take before the fact is kept as it is.", _count)
    brain_half_life_days: tuple[tuple[str, float], ...] = setting("loop=14,project=90,feedback=180,fact=365,reference=365,skill=365,user=730", "Brain rerank: how fast each entry type's relevance fades with age (half-life in days, `type=days` pairs).", _days_by_kind)
    brain_rerank: bool = setting("on", "Brain hybrid search reranks by relevance x recency x recall frequency x importance (`off`: relevance alone).", _switch)
    consolidate_batch: int = setting("300", "Consolidation: most current facts of one scope compared per run (the newest first).", _count)
    recall_core_tokens: int = setting("2000", "Recall tier `core` (pinned entries), in tokens.", _whole)
    recall_recent_tokens: int = setting("1000", "Recall tier `recent` (last-touched facts), in tokens.", _whole)
    recall_archival_tokens: int = setting("3000", "Recall tier `archival` (query-driven hybrid search), in tokens.", _whole)
    openai_base_url: str = setting("https://api.openai.com", "Memory router: upstream for OpenAI routes (any OpenAI-compatible server).", _text)
    anthropic_base_url: str = setting("https://api.anthropic.com", "Memory router: upstream for Anthropic routes.", _text)
    gemini_base_url: str = setting("https://generativelanguage.googleapis.com", "Memory router: upstream for Gemini routes.", _text)
    context_limit_tokens: int = setting("800", "Memory router: default token budget of the injected memory context.", _whole)
    required_secrets: tuple[str, ...] = setting("MEMVAULT_BRAIN_CREDENTIALS", "Workers: comma-separated names of the secrets a deployment must have; `/health` reports each as present or not (never its value) and answers 503 while one is missing.", _names(","))
    cron_schedules: tuple[str, ...] = setting("", "Workers: the deployment's cron expressions separated by `;`, kept equal to `[triggers] crons` in wrangler.toml (a Worker cannot read its own triggers); `/health` reports how many.", _names(";"))
    cache_ttl_seconds: int = setting("300", "Read cache: how long a repeated read (a memory or brain search, a recall envelope, a memory-key lookup) is answered from KV on Workers (at least 60 s there) or the in-process LRU locally. A write is seen at once whatever this is; a key revoked outside memvault's own revocation keeps working at most this long.", _count)
    reembed_batch: int = setting("200", "Nightly cron: most unembedded rows embedded per vault per run.", _count)
    cron_query_budget: int = setting("600", "Nightly cron: most database statements one cron invocation spends (D1 allows 1,000 a Worker invocation); the run stops before the next vault or page once this is spent and the next invocation resumes from the cursor.", _count)
    cron_vault_budget: int = setting("100", "Nightly cron: most vaults one cron invocation tends (each costs Durable Object, Workers AI and D1 calls); the next invocation resumes after the last one.", _count)
    backup_page_rows: int = setting("500", "Nightly backup: rows read per database statement and written per part object.", _count)
    backup_keep: int = setting("7", "Nightly backup: how many complete backups are kept in the blob store (R2 on Workers); older ones are deleted once a new one is complete.", _count)
    log_level: str = setting("info", "Log level of the local server.", _text)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Setting:
    """A setting as the outside sees it: variable name, default text, help."""

    name: str
    default: str
    help: str
    field: str


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(PREFIX + f.name.upper(), f.metadata["default"], f.metadata["help"], f.name) for f in fields(Settings)
)


def load_settings(source: Mapping[str, Any] | None = None) -> Settings:
    """Settings from ``source`` (variable name -> text); a missing variable takes its default."""
    source = source or {}
    values: dict[str, Any] = {}
    for spec in fields(Settings):
        name = PREFIX + spec.name.upper()
        raw = source.get(name)
        if raw is None:
            continue
        try:
            values[spec.name] = spec.metadata["parse"](str(raw))
        except ValueError as exc:
            raise InvalidInput(f"setting {name}: {exc}") from exc
    return Settings(**values)

"""Every setting is defined here once: its field in ``Settings`` carries the default (as the
environment would spell it), the help text and the parser. Values come from a mapping
(environment variables locally, the Worker's ``env`` vars on Cloudflare); the variable of field
``search_limit`` is ``MEMVAULT_SEARCH_LIMIT``. Settings are what a user or operator decides
(credentials, URLs, TTLs, budgets, limits, retention); the constants benchmarks measured are
``Tuning`` (core/tuning.py) and never come from the environment. docs/settings.md is generated
from these definitions (scripts/settings_reference.py)."""

from __future__ import annotations

import base64
import binascii
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
MIN_ADMIN_TOKEN_CHARS = 32
SEALING_KEY_BYTES = 32


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


def _seconds(raw: str) -> float:
    value = float(raw)
    if not value > 0:
        raise ValueError("must be a positive number of seconds")
    return value


def _hours(raw: str) -> float:
    return float(raw) * 3600.0


def _days(raw: str) -> float:
    return float(raw) * 86400.0


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


def _admin_token(raw: str) -> str:
    if raw and len(raw) < MIN_ADMIN_TOKEN_CHARS:
        raise ValueError(f"must be at least {MIN_ADMIN_TOKEN_CHARS} characters (`openssl rand -hex 32` makes one)")
    return raw


def sealing_key(text: str) -> bytes:
    """A sealing secret's 32 bytes from its base64 text (standard or URL-safe alphabet)."""
    try:
        raw = base64.b64decode(text.strip().replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("must be base64 text (`openssl rand -base64 32` makes one)") from None
    if len(raw) != SEALING_KEY_BYTES:
        raise ValueError(f"must be {SEALING_KEY_BYTES} bytes in base64, not {len(raw)} (`openssl rand -base64 32`)")
    return raw


def _sealing_secret(raw: str) -> str:
    if raw.strip():
        sealing_key(raw)
    return raw.strip()


def _sealing_secrets(raw: str) -> tuple[str, ...]:
    return tuple(_sealing_secret(part) for part in raw.split(",") if part.strip())


def setting(default: str, help: str, parse: Callable[[str], T], *, common: bool = False, secret: bool = False) -> T:
    """One field of ``Settings``; ``common`` puts it in the reference's first table; a ``secret``
    one's value never appears in a log line (``Settings.secret_values``)."""
    return field(default=parse(default),
                 metadata={"default": default, "help": help, "parse": parse, "common": common, "secret": secret})


@dataclass(frozen=True)
class Settings:
    data_dir: str = setting(".memvault", "Local mode: folder holding vault files, the mirror and blobs.", _text, common=True)
    embedder: str = setting("minilm", "Local embedder: `minilm` (all-MiniLM-L6-v2 int8 ONNX) or `hash` (tests only).", _text, common=True)
    embedding_model: str = setting("@cf/baai/bge-base-en-v1.5", "Workers AI embedding model.", _text, common=True)
    log_level: str = setting("info", "Log level of the local server.", _text, common=True)
    brain_credentials: str = setting("{}", "Brain credentials as JSON: `{\"<sha256 hex of token>\": {\"name\": \"...\", \"scopes\": [\"business\"], \"writer\": false}}`; only writers may write.", _text, common=True)
    brain_scopes: tuple[str, ...] = setting("business,family,personal,shared", "The brain's scopes, separated by `,` (names of a-z, 0-9, `_`, `-`): every fact and skill belongs to one, and credentials are granted some of them. Any number works: a read binds its wall as one parameter.", _scope_names, common=True)
    brain_llm_url: str = setting("", "Local mode: base URL of an OpenAI-compatible server (Ollama, llama-server, vLLM) the brain's bands and consolidation ask; empty runs only the exact-duplicate band.", _text, common=True)
    brain_llm_model: str = setting("", "Model the brain's LLM runs: a name the local server knows, or on Workers a Workers AI text model (for example `@cf/meta/llama-3.1-8b-instruct`); empty turns the LLM off.", _text, common=True)
    brain_llm_api_key: str = setting("", "Local mode: bearer key for `MEMVAULT_BRAIN_LLM_URL`, if the server wants one (a secret).", _text, common=True, secret=True)
    openai_base_url: str = setting("https://api.openai.com", "Memory router: upstream for OpenAI routes (any OpenAI-compatible server).", _text, common=True)
    anthropic_base_url: str = setting("https://api.anthropic.com", "Memory router: upstream for Anthropic routes.", _text, common=True)
    gemini_base_url: str = setting("https://generativelanguage.googleapis.com", "Memory router: upstream for Gemini routes.", _text, common=True)
    context_limit_tokens: int = setting("800", "Memory router: default token budget of the injected memory context.", _whole, common=True)
    search_budget_tokens: int = setting("1000", "Default token budget of a search result.", _count, common=True)
    long_term_window_days: float = setting("90", "Retention: conversation memory older than this many days is purged nightly (unless its key keeps its archive); until then search labels it `long_term` once past the working window.", _days, common=True)
    cache_ttl_seconds: int = setting("300", "Read cache: how long a repeated read (a memory or brain search, a recall envelope, a memory-key lookup) is answered from KV on Workers (at least 60 s there) or the in-process LRU locally. A write is seen at once whatever this is; on Workers a key revoked outside memvault's admin surface keeps working at most this long (the local server looks keys up on every call).", _count, common=True)
    max_body_bytes: int = setting("1048576", "Largest request body memvault's own routes accept, in bytes.", _count, common=True)
    max_provider_body_bytes: int = setting("20971520", "Largest request body the memory router's provider routes accept, in bytes (inline images and documents travel in it; wrangler.toml sets 8 MiB, within an isolate's 128 MB).", _count, common=True)
    required_secrets: tuple[str, ...] = setting("MEMVAULT_BRAIN_CREDENTIALS", "Workers: comma-separated names of the secrets a deployment must have; `/health` reports each as present or not (never its value) and answers 503 while one is missing.", _names(","), common=True)
    admin_token: str = setting("", "The admin credential, a secret of at least 32 characters (on Workers `wrangler secret put MEMVAULT_ADMIN_TOKEN`): sent as a bearer token, it creates, lists and revokes memory keys and brain credentials over `/v1/admin/…`, and `memvault keys … --url` and `memvault brain-token … --url` send it from this variable. Empty: every admin route answers 404.", _admin_token, secret=True)
    provider_key_secret: str = setting("", "The secret provider keys held for memory keys are sealed under (AES-256-GCM): 32 random bytes in base64 (`openssl rand -base64 32`; on Workers `wrangler secret put MEMVAULT_PROVIDER_KEY_SECRET`). Empty: no provider key can be stored, and the memory router forwards only the credentials a call carries (docs/provider-keys.md).", _sealing_secret, secret=True)
    provider_key_old_secrets: tuple[str, ...] = setting("", "Earlier values of `MEMVAULT_PROVIDER_KEY_SECRET`, separated by `,`, while the keys sealed under them are resealed under the current one (`memvault keys provider reseal`); a secret, like the current one.", _sealing_secrets, secret=True)
    backup_keep: int = setting("7", "Nightly backup: how many complete backups are kept in the blob store (R2 on Workers); older ones are deleted once a new one is complete.", _count, common=True)
    search_limit: int = setting("20", "Default number of results of a brain search (conversation-memory search fills its token budget instead, capped only by a `limit` the caller gives).", _count)
    receipt_days: float = setting("30", "Receipts (what each routed call and memory search recalled, by id) are kept this many days; the nightly run deletes older ones.", _days)
    read_page_size: int = setting("50", "Default number of messages one `get_memory` page holds.", _count)
    race_timeout_ms: int = setting("1500", "How long retrieval waits for vault or mirror (and brain hybrid search for its vector channel) before giving up.", _count)
    open_vaults: int = setting("64", "Local mode: most vault files the server holds open at once (each takes three file descriptors and what its searches hold in memory); the one used least recently is closed to open another, so a folder may hold any number of vaults.", _count)
    idle_connection_seconds: float = setting("10", "Local server: a connection that has not sent a whole request's headers this many seconds after it opened or after its last response is closed.", _seconds)
    vector_memory_mb: int = setting("64", "Most memory one vault's vector codes may take (8 + dimension/8 bytes a row); past it the codes are read in pages on each search.", _count)
    search_rows_mb: int = setting("16", "Most memory one vault's rows and vectors may take held for its searches (about 3 KB a row of a conversation at 384 dimensions); past it a search reads the rows it keeps from SQL and finds them through the vector codes. At most `MEMVAULT_VECTOR_MEMORY_MB`.", _count)
    brain_max_batch: int = setting("500", "Most facts one brain write may carry.", _count)
    brain_llm_timeout_ms: int = setting("20000", "How long one answer of the brain's LLM may take before the fact is kept as it is.", _count)
    recall_core_tokens: int = setting("2000", "Recall tier `core` (pinned entries), in tokens.", _whole)
    recall_recent_tokens: int = setting("1000", "Recall tier `recent` (last-touched facts), in tokens.", _whole)
    recall_archival_tokens: int = setting("3000", "Recall tier `archival` (query-driven hybrid search), in tokens.", _whole)
    access_team_domain: str = setting("", "Cloudflare Access: the team domain, `https://<team>.cloudflareaccess.com`. Set (with `MEMVAULT_ACCESS_AUD`), a request that carries no brain credential may sign in with the token Access adds to it; empty turns Access sign-in off.", _text)
    access_aud: tuple[str, ...] = setting("", "Cloudflare Access: the Application Audience (AUD) tag of the Access application in front of memvault (several separated by `,`); a token for any other application is refused.", _names(","))
    access_users: str = setting("{}", "Cloudflare Access: JSON mapping each email Access may vouch for to the `name` of one credential in `MEMVAULT_BRAIN_CREDENTIALS`, or to the id of a stored brain credential (as `memvault brain-token list` shows it), whose scopes and writer flag the user gets: `{\"alice@example.com\": \"family-reader\", \"bob@example.com\": \"key_3f9c0d1e2a4b5c6d\"}`. A verified email not listed gets 403.", _text)
    access_keys_ttl_seconds: int = setting("3600", "Cloudflare Access: how long the team's signing keys are kept before they are fetched again (a token naming an unknown key refetches them at most once a minute).", _count)
    buffer_idle_hours: float = setting("24", "Nightly run: pending text (too short for a chunk) idle for longer than this is cut into a chunk.", _hours)
    cron_query_budget: int = setting("600", "Nightly run: most database statements one cron invocation spends (D1 allows 1,000 a Worker invocation); the run stops before the next vault or page once this is spent and the next invocation resumes from the cursor.", _count)
    cron_vault_budget: int = setting("100", "Nightly run: most vaults one cron invocation tends (each costs Durable Object, Workers AI and D1 calls); the next invocation resumes after the last one.", _count)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def secret_values(self) -> tuple[str, ...]:
        """The values of the settings that are secrets, as set (none of a setting left empty)."""
        values: list[str] = []
        for spec in fields(self):
            if spec.metadata["secret"]:
                value = getattr(self, spec.name)
                values.extend(value if isinstance(value, tuple) else (value,))
        return tuple(value for value in values if value)


@dataclass(frozen=True)
class Setting:
    """A setting as the outside sees it: variable name, default text, help, and whether it is one of
    the common ones the reference lists first."""

    name: str
    default: str
    help: str
    field: str
    common: bool


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(PREFIX + f.name.upper(), f.metadata["default"], f.metadata["help"], f.name, f.metadata["common"])
    for f in fields(Settings)
)

_TUNING = "a tuning constant now (`Tuning.{}` in core/tuning.py), no longer read from the environment"
# Variables memvault once read and reads no more, with where each value went: a deployment that
# still sets one hears of it (``retired_settings``) instead of having it ignored in silence.
RETIRED: Mapping[str, str] = {
    "MEMVAULT_HOT_WINDOW_HOURS": "it only named the `hot` label of search results, which now always means the last 4 hours",
    "MEMVAULT_CRON_SCHEDULES": "the Worker bundle reads the schedule from `[triggers] crons` in wrangler.toml when it is built",
    "MEMVAULT_WORKING_WINDOW_DAYS": _TUNING.format("working_window_seconds"),
    **{PREFIX + name.upper(): _TUNING.format(name) for name in (
        "chunk_tokens", "chunk_overlap_tokens", "recency_weight", "embed_batch", "brain_hook_chars",
        "brain_block_similarity", "brain_flag_similarity", "brain_candidate_similarity", "brain_rerank",
        "consolidate_batch", "reembed_batch", "backup_page_rows")},
    "MEMVAULT_MIRROR_HEAD_START_MS": _TUNING.format("mirror_head_start_seconds"),
    "MEMVAULT_BRAIN_HALF_LIFE_DAYS": _TUNING.format("brain_half_life_seconds"),
}


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


def retired_settings(source: Mapping[str, Any]) -> tuple[str, ...]:
    """The retired variables ``source`` still sets (names only, never values), in ``RETIRED``'s order."""
    return tuple(name for name in RETIRED if source.get(name) is not None)


def retired_warning(name: str) -> str:
    """What a process says about a retired variable it found set."""
    return f"{name} is set but no longer read: {RETIRED[name]}; remove it (docs/settings.md)"

"""Every setting is defined here once: name, default, help. Values come from a mapping
(environment variables locally, the Worker's ``env`` vars on Cloudflare)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memvault.core.errors import InvalidInput


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    help: str
    parse: Callable[[str], Any] = str

    @property
    def field(self) -> str:
        return self.name.removeprefix("MEMVAULT_").lower()


def _bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"not a boolean: {raw!r}")


def _hours(raw: str) -> float:
    return float(raw) * 3600.0


def _days(raw: str) -> float:
    return float(raw) * 86400.0


def _shares(raw: str) -> tuple[float, ...]:
    shares = tuple(float(part) for part in raw.split(","))
    if len(shares) != 3 or any(s < 0 for s in shares) or sum(shares) > 1.0 + 1e-9:
        raise ValueError("three non-negative shares summing to at most 1")
    return shares


SETTINGS: tuple[Setting, ...] = (
    Setting("MEMVAULT_DATA_DIR", ".memvault", "Local mode: folder holding vault files, the mirror and blobs."),
    Setting("MEMVAULT_EMBEDDER", "minilm", "Local embedder: `minilm` (all-MiniLM-L6-v2 int8 ONNX) or `hash` (tests only)."),
    Setting("MEMVAULT_EMBEDDING_MODEL", "@cf/baai/bge-base-en-v1.5", "Workers AI embedding model."),
    Setting("MEMVAULT_CHUNK_TOKENS", "300", "Target size of a stored chunk, in tokens.", int),
    Setting("MEMVAULT_CHUNK_OVERLAP_TOKENS", "30", "Tokens repeated between consecutive chunks.", int),
    Setting("MEMVAULT_HOT_WINDOW_HOURS", "4", "Recency window `hot`, in hours.", _hours),
    Setting("MEMVAULT_WORKING_WINDOW_DAYS", "3", "Recency window `working`, in days.", _days),
    Setting("MEMVAULT_LONG_TERM_WINDOW_DAYS", "90", "Recency window `long_term`, in days; older chunks are purged nightly.", _days),
    Setting("MEMVAULT_WINDOW_SHARES", "0.2,0.3,0.3", "Shares of the result budget reserved for hot, working and long-term; the rest is backfilled by score.", _shares),
    Setting("MEMVAULT_SEARCH_LIMIT", "20", "Default number of items a search returns at most.", int),
    Setting("MEMVAULT_SEARCH_BUDGET_TOKENS", "1000", "Default token budget of a search result.", int),
    Setting("MEMVAULT_RACE_TIMEOUT_MS", "1500", "How long retrieval waits for vault or mirror before giving up.", int),
    Setting("MEMVAULT_MIRROR_HEAD_START_MS", "150", "Head start the vault gets before the mirror is also asked (the mirror is asked at once if the vault fails).", int),
    Setting("MEMVAULT_EMBED_BATCH", "64", "Texts per embedding call when storing.", int),
    Setting("MEMVAULT_MAX_BODY_BYTES", "1048576", "Largest request body accepted, in bytes.", int),
    Setting("MEMVAULT_BUFFER_IDLE_HOURS", "24", "Nightly cron flushes pending buffers idle for longer than this.", _hours),
    Setting("MEMVAULT_BRAIN_CREDENTIALS", "{}", "Brain credentials as JSON: `{\"<sha256 hex of token>\": {\"name\": \"...\", \"scopes\": [\"business\"], \"writer\": false}}`; only writers may write."),
    Setting("MEMVAULT_BRAIN_HOOK_CHARS", "600", "Longest fact kept inline in the brain; a longer body goes to the blob store and the row keeps this many characters as its hook.", int),
    Setting("MEMVAULT_BRAIN_MAX_BATCH", "500", "Most facts one brain write may carry.", int),
    Setting("MEMVAULT_RECALL_CORE_TOKENS", "2000", "Recall tier `core` (pinned entries), in tokens.", int),
    Setting("MEMVAULT_RECALL_RECENT_TOKENS", "1000", "Recall tier `recent` (last-touched facts), in tokens.", int),
    Setting("MEMVAULT_RECALL_ARCHIVAL_TOKENS", "3000", "Recall tier `archival` (query-driven hybrid search), in tokens.", int),
    Setting("MEMVAULT_OPENAI_BASE_URL", "https://api.openai.com", "Memory router: upstream for OpenAI routes (any OpenAI-compatible server)."),
    Setting("MEMVAULT_ANTHROPIC_BASE_URL", "https://api.anthropic.com", "Memory router: upstream for Anthropic routes."),
    Setting("MEMVAULT_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com", "Memory router: upstream for Gemini routes."),
    Setting("MEMVAULT_CONTEXT_LIMIT_TOKENS", "800", "Memory router: default token budget of the injected memory context.", int),
    Setting("MEMVAULT_REQUIRED_SECRETS", "MEMVAULT_BRAIN_CREDENTIALS", "Workers: comma-separated names of the secrets a deployment must have; `/health` reports each as present or not (never its value) and answers 503 while one is missing.", lambda raw: tuple(n.strip() for n in raw.split(",") if n.strip())),
    Setting("MEMVAULT_CRON_SCHEDULES", "", "Workers: the deployment's cron expressions separated by `;`, kept equal to `[triggers] crons` in wrangler.toml (a Worker cannot read its own triggers); `/health` reports how many.", lambda raw: tuple(c.strip() for c in raw.split(";") if c.strip())),
    Setting("MEMVAULT_REEMBED_BATCH", "200", "Nightly cron: most unembedded rows embedded per vault per run.", int),
    Setting("MEMVAULT_LOG_LEVEL", "info", "Log level of the local server."),
)

_BY_FIELD = {setting.field: setting for setting in SETTINGS}


class Settings:
    """Parsed settings; attribute names are the setting names without the prefix, lower-cased."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getattr__(self, field: str) -> Any:
        try:
            return self._values[field]
        except KeyError:
            raise AttributeError(field) from None

    def replace(self, **changes: Any) -> Settings:
        unknown = set(changes) - set(_BY_FIELD)
        if unknown:
            raise AttributeError(f"unknown settings: {sorted(unknown)}")
        return Settings({**self._values, **changes})


def load_settings(source: Mapping[str, Any] | None = None) -> Settings:
    source = source or {}
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        raw = source.get(setting.name)
        raw_text = setting.default if raw is None else str(raw)
        try:
            values[setting.field] = setting.parse(raw_text)
        except ValueError as exc:
            raise InvalidInput(f"setting {setting.name}: {exc}") from exc
    return Settings(values)

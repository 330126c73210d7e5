"""The bot's configuration, read once from a mapping: environment variables locally, the Worker's
vars and secrets on Cloudflare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class BotConfig:
    telegram_token: str  # secret TELEGRAM_BOT_TOKEN
    webhook_secret: str  # secret TELEGRAM_WEBHOOK_SECRET: Telegram echoes it in a header on every update
    memvault_key: str  # secret MEMVAULT_KEY: the mk_ key the memory router (and, locally, HTTP) takes
    brain_token: str  # secret MEMVAULT_BRAIN_TOKEN: the bot's brain credential, for /remember
    llm_api_key: str  # secret LLM_API_KEY: the provider key the router forwards
    memvault_url: str = "http://127.0.0.1:8787"  # MEMVAULT_URL; on Workers the service binding is used
    telegram_api: str = "https://api.telegram.org"  # TELEGRAM_API_BASE
    llm_model: str = "gpt-4o-mini"  # LLM_MODEL: any model the OpenAI-compatible upstream serves
    brain_scope: str = "family"  # BRAIN_SCOPE: where /remember writes facts
    history_turns: int = 8  # HISTORY_TURNS: recent messages sent with each question

    @classmethod
    def from_mapping(cls, values: Mapping[str, object] | Callable[[str], object | None]) -> BotConfig:
        get = values.get if isinstance(values, Mapping) else values

        def text(name: str, default: str | None = None) -> str:
            value = get(name)
            if value is None or str(value) == "":
                if default is None:
                    raise KeyError(f"the bot needs {name}")
                return default
            return str(value)

        return cls(
            telegram_token=text("TELEGRAM_BOT_TOKEN"),
            webhook_secret=text("TELEGRAM_WEBHOOK_SECRET"),
            memvault_key=text("MEMVAULT_KEY"),
            brain_token=text("MEMVAULT_BRAIN_TOKEN"),
            llm_api_key=text("LLM_API_KEY"),
            memvault_url=text("MEMVAULT_URL", cls.memvault_url),
            telegram_api=text("TELEGRAM_API_BASE", cls.telegram_api),
            llm_model=text("LLM_MODEL", cls.llm_model),
            brain_scope=text("BRAIN_SCOPE", cls.brain_scope),
            history_turns=int(text("HISTORY_TURNS", str(cls.history_turns))),
        )

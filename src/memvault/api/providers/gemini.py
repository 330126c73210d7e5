"""Gemini ``generateContent``: ``systemInstruction``, ``contents``/``parts`` and the ``model`` role."""

from __future__ import annotations

from typing import Any

from memvault.api.providers.base import (
    Json,
    SseEvent,
    int_or_none,
    parse_json_events,
    remember_flag,
    require_list,
    strip_flags,
)
from memvault.core.errors import InvalidInput
from memvault.core.memory.router import Conversation, Reply, Turn
from memvault.core.settings import Settings

_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
}
_SYSTEM_FIELDS = ("systemInstruction", "system_instruction")


def _text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    # Thought summaries are the model's scratch work, not its answer.
    return "".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def _first_candidate_text(response: Json) -> tuple[str, bool]:
    candidates = response.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return "", False
    content = candidates[0].get("content")
    text = _text(content.get("parts")) if isinstance(content, dict) else ""
    return text, candidates[0].get("finishReason") is not None


def _usage(response: Json) -> tuple[int | None, int | None]:
    usage = response.get("usageMetadata")
    if not isinstance(usage, dict):
        return None, None
    return int_or_none(usage.get("promptTokenCount")), int_or_none(usage.get("candidatesTokenCount"))


class GeminiCodec:
    name = "gemini"
    key_headers = ("x-goog-api-key",)

    def base_url(self, settings: Settings) -> str:
        return settings.gemini_base_url

    def key_value(self, provider_key: str) -> str:
        return provider_key

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        turns = []
        for index, content in enumerate(require_list(body, "contents")):
            remember = remember_flag(content, f"contents[{index}]")
            role = content.get("role", "user")
            if role not in ("user", "model"):
                raise InvalidInput(f"`contents[{index}].role` must be user or model")
            turns.append(Turn("assistant" if role == "model" else "user", _text(content.get("parts")), remember))
        model = body.get("model")
        return Conversation(tuple(turns), model if isinstance(model, str) else None, bool(stream))

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        return strip_flags(body, "contents")

    def inject(self, body: Json, context: str) -> Json:
        field = next((f for f in _SYSTEM_FIELDS if f in body), _SYSTEM_FIELDS[0])
        system = body.get(field)
        if isinstance(system, dict) and isinstance(system.get("parts"), list):
            return {**body, field: {**system, "parts": [*system["parts"], {"text": context}]}}
        return {**body, field: {"parts": [{"text": context}]}}

    def reply(self, body: Json) -> Reply:
        text, _ = _first_candidate_text(body)
        return Reply(text, *_usage(body))

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        parts: list[str] = []
        usage: tuple[int | None, int | None] = (None, None)
        finished = False
        for response in parse_json_events(events):
            text, done = _first_candidate_text(response)
            parts.append(text)
            finished = finished or done
            if isinstance(response.get("usageMetadata"), dict):
                usage = _usage(response)
        return Reply("".join(parts), *usage, complete=finished)

    def error_body(self, status: int, message: str) -> Json:
        state = _STATUSES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return {"error": {"code": status, "message": message, "status": state}}

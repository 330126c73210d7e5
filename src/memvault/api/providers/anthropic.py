"""Anthropic messages: ``system`` is a string or text blocks; other blocks pass through untouched."""

from __future__ import annotations

from memvault.api.providers.base import (
    Json,
    SseEvent,
    append_text,
    chat_messages_conversation,
    int_or_none,
    json_of,
    parse_json_events,
    strip_flags,
    sum_of,
    text_of_parts,
    with_tokens,
)
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import Conversation, Reply
from memvault.core.settings import Settings

_STOP = "message_stop"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    502: "api_error",
    503: "overloaded_error",
    529: "overloaded_error",
}


class AnthropicCodec:
    name = "anthropic"
    key_headers = ("x-api-key", "authorization")

    def base_url(self, settings: Settings) -> str:
        return settings.anthropic_base_url

    def key_value(self, provider_key: str) -> str:
        return provider_key

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        system = body.get("system")
        if system is not None and not isinstance(system, (str, list)):
            raise InvalidInput("`system` must be a string or an array of text blocks")
        return chat_messages_conversation(body, stream)

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        return strip_flags(body, "messages")

    def inject(self, body: Json, context: str) -> Json:
        system = body.get("system")
        if isinstance(system, list):
            # Appended after the caller's blocks, so a cached system prefix stays cached.
            return {**body, "system": [*system, {"type": "text", "text": context}]}
        return {**body, "system": append_text(system if isinstance(system, str) else "", context)}

    def reply(self, body: Json) -> Reply:
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        all_input, cached = _input(usage)
        return with_tokens(text_of_parts(body.get("content")), (all_input, int_or_none(usage.get("output_tokens")), cached))

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        parts: list[str] = []
        input_tokens = cached = output_tokens = None
        stopped = False
        for event in parse_json_events(events):
            kind = event.get("type")
            if kind == "message_start" and isinstance(event.get("message"), dict):
                usage = event["message"].get("usage") or {}
                input_tokens, cached = _input(usage) if isinstance(usage, dict) else (None, None)
            elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
                delta = event["delta"]
                if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                    parts.append(delta["text"])
            elif kind == "message_delta" and isinstance(event.get("usage"), dict):
                # message_delta's counts are the message's totals so far.
                output_tokens = int_or_none(event["usage"].get("output_tokens"))
                if int_or_none(event["usage"].get("input_tokens")) is not None:
                    input_tokens, cached = _input(event["usage"])
            elif kind == _STOP:
                stopped = True
        return Reply("".join(parts), input_tokens, output_tokens, complete=stopped, cached_tokens=cached)

    def ends_stream(self, event: SseEvent) -> bool:
        # Most events are deltas: the word is looked for before any JSON is parsed.
        found = json_of(event) if _STOP in event.data else None
        return found is not None and found.get("type") == _STOP

    def error_body(self, status: int, message: str, code: str | None = None) -> Json:
        kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


def _input(usage: Json) -> tuple[int | None, int | None]:
    """All input tokens and the cached ones: Anthropic counts the tokens written to and read from
    its cache apart from `input_tokens`."""
    read = int_or_none(usage.get("cache_read_input_tokens"))
    return sum_of(usage.get("input_tokens"), usage.get("cache_creation_input_tokens"), read), read

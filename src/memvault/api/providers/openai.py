"""OpenAI chat completions (also what most local model servers speak)."""

from __future__ import annotations

from memvault.api.providers.base import (
    NO_TOKENS,
    Json,
    SseEvent,
    Tokens,
    append_text,
    chat_messages_conversation,
    detail,
    int_or_none,
    parse_json_events,
    strip_flags,
    text_of_parts,
    with_tokens,
)
from memvault.core.memory.chat_calls import Conversation, Reply
from memvault.core.settings import Settings

_SYSTEM_ROLES = ("system", "developer")
_ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


class OpenAICodec:
    name = "openai"
    key_headers = ("authorization",)

    def base_url(self, settings: Settings) -> str:
        return settings.openai_base_url

    def key_value(self, provider_key: str) -> str:
        return f"Bearer {provider_key}"

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        return chat_messages_conversation(body, stream)

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        return strip_flags(body, "messages")

    def inject(self, body: Json, context: str) -> Json:
        messages = list(body["messages"])
        # Into the caller's own system message wherever it stands: a second one ahead of it would
        # change what the model reads first.
        at = next((i for i, m in enumerate(messages) if m.get("role") in _SYSTEM_ROLES), None)
        if at is None:
            messages.insert(0, {"role": "system", "content": context})
            return {**body, "messages": messages}
        system = messages[at]
        content = system.get("content")
        if isinstance(content, list):
            messages[at] = {**system, "content": [*content, {"type": "text", "text": context}]}
        else:
            messages[at] = {**system, "content": append_text(content if isinstance(content, str) else "", context)}
        return {**body, "messages": messages}

    def reply(self, body: Json) -> Reply:
        text = ""
        choices = body.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                text = text_of_parts(message.get("content"))
        return with_tokens(text, _usage(body))

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        parts: list[str] = []
        usage = NO_TOKENS
        finished = any(self.ends_stream(event) for event in events)
        for chunk in parse_json_events(events):
            if isinstance(chunk.get("usage"), dict):
                usage = _usage(chunk)
            for choice in chunk.get("choices") or ():
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                    parts.append(delta["content"])
                finished = finished or choice.get("finish_reason") is not None
        return with_tokens("".join(parts), usage, complete=finished)

    def ends_stream(self, event: SseEvent) -> bool:
        # A choice's finish_reason already completes the answer, but a usage chunk may follow it.
        return event.data.strip() == "[DONE]"

    def error_body(self, status: int, message: str, code: str | None = None) -> Json:
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _usage(body: Json) -> Tokens:
    """Chat completions' usage (the stream's last chunk with `stream_options.include_usage`)."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return NO_TOKENS
    return (int_or_none(usage.get("prompt_tokens")), int_or_none(usage.get("completion_tokens")),
            detail(usage, "prompt_tokens_details", "cached_tokens"))

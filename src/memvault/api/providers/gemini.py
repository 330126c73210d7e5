"""Gemini ``generateContent``: ``systemInstruction``, ``contents``/``parts`` and the ``model`` role."""

from __future__ import annotations

from typing import Any

from memvault.api.providers.base import (
    NO_TOKENS,
    TOOL_TURN,
    Json,
    SseEvent,
    Tokens,
    int_or_none,
    json_of,
    parse_json_events,
    remember_flag,
    require_list,
    strip_flags,
    sum_of,
    with_tokens,
)
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import Conversation, Reply, Turn
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
_CACHE_FIELDS = ("cachedContent", "cached_content")
# An answer stopped with finishReason CONTINUATION goes on in a call that sends the same contents
# again with this token (google-genai does it by itself).
_CONTINUATION_FIELDS = ("continuationToken", "continuation_token")
# Function results come back as "tool" (google-genai) or "function" (older REST examples) turns.
_ROLES = ("user", "model", "tool", "function")


def _repeated(value: Any) -> list[Any]:
    """A repeated field's entries: Gemini's JSON takes one entry in place of a list of one
    (``"parts": {"text": …}``, ``"contents": {…}``), as REST callers often send it."""
    return value if isinstance(value, list) else [value] if isinstance(value, dict) else []


def _holds(parts: Any, kind: str) -> bool:
    return any(isinstance(p, dict) and kind in p for p in _repeated(parts))


def _text(parts: Any) -> str:
    # Thought summaries are the model's scratch work, not its answer.
    return "".join(
        p["text"] for p in _repeated(parts) if isinstance(p, dict) and isinstance(p.get("text"), str)
        and not p.get("thought")
    )


def _contents(body: Json) -> list[Any]:
    contents = body.get("contents")
    return require_list({"contents": [contents] if isinstance(contents, dict) else contents}, "contents")


def _first_candidate(response: Json) -> Json | None:
    candidates = response.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return None
    return candidates[0]


def _first_candidate_text(response: Json) -> tuple[str, bool]:
    return _candidate_text(_first_candidate(response))


def _candidate_text(candidate: Json | None) -> tuple[str, bool]:
    """A candidate's answer text, and whether it says it is finished."""
    if candidate is None:
        return "", False
    content = candidate.get("content")
    text = _text(content.get("parts")) if isinstance(content, dict) else ""
    return text, candidate.get("finishReason") is not None


def _usage(response: Json) -> Tokens:
    """`usageMetadata` (streamed: the last chunk's counts are the answer's): the prompt holds the
    cached content; thinking is billed as output."""
    usage = response.get("usageMetadata")
    if not isinstance(usage, dict):
        return NO_TOKENS
    return (int_or_none(usage.get("promptTokenCount")),
            sum_of(usage.get("candidatesTokenCount"), usage.get("thoughtsTokenCount")),
            int_or_none(usage.get("cachedContentTokenCount")))


def _inject_into_user_turn(body: Json, context: str) -> Json:
    """A request on cached content may not set ``systemInstruction`` (the cache holds it), so the
    memory leads the last turn the user typed; with no such turn it comes as a user turn first."""
    contents = list(_contents(body))
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content.get("role", "user") == "user" and _text(content.get("parts")):
            contents[index] = {**content, "parts": [{"text": context}, *_repeated(content["parts"])]}
            return {**body, "contents": contents}
    return {**body, "contents": [{"role": "user", "parts": [{"text": context}]}, *contents]}


class GeminiCodec:
    name = "gemini"
    key_headers = ("x-goog-api-key",)

    def base_url(self, settings: Settings) -> str:
        return settings.gemini_base_url

    def key_value(self, provider_key: str) -> str:
        return provider_key

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        turns = []
        for index, content in enumerate(_contents(body)):
            remember = remember_flag(content, f"contents[{index}]")
            role = content.get("role", "user")
            if role not in _ROLES:
                raise InvalidInput(f"`contents[{index}].role` must be one of {', '.join(_ROLES)}")
            parts = content.get("parts")
            if role in ("tool", "function") or _holds(parts, "functionResponse"):
                turns.append(TOOL_TURN)
            if role in ("user", "model"):
                turns.append(Turn("assistant" if role == "model" else "user", _text(parts), remember))
            if _holds(parts, "functionCall"):
                turns.append(TOOL_TURN)
        model = body.get("model")
        resumes = any(body.get(f) for f in _CONTINUATION_FIELDS)
        return Conversation(tuple(turns), model if isinstance(model, str) else None, bool(stream), resumes)

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        if isinstance(body.get("contents"), dict):
            stripped, changed = strip_flags({**body, "contents": [body["contents"]]}, "contents")
            return ({**stripped, "contents": stripped["contents"][0]}, True) if changed else (body, False)
        return strip_flags(body, "contents")

    def inject(self, body: Json, context: str) -> Json:
        if any(body.get(f) for f in _CACHE_FIELDS):
            return _inject_into_user_turn(body, context)
        field = next((f for f in _SYSTEM_FIELDS if f in body), _SYSTEM_FIELDS[0])
        system = body.get(field)
        if system is None:
            return {**body, field: {"parts": [{"text": context}]}}
        if isinstance(system, dict) and isinstance(system.get("parts"), list | dict):
            return {**body, field: {**system, "parts": [*_repeated(system["parts"]), {"text": context}]}}
        if isinstance(system, str):
            return {**body, field: {"parts": [{"text": system}, {"text": context}]}}
        # A system field in a shape not known here is the caller's, left as it is.
        return _inject_into_user_turn(body, context)

    def reply(self, body: Json) -> Reply:
        text, _ = _first_candidate_text(body)
        return with_tokens(text, _usage(body))

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        parts: list[str] = []
        usage = NO_TOKENS
        finished = False
        checkpoint: int | None = None  # the parts up to the stream's last continuation token
        for response in parse_json_events(events):
            candidate = _first_candidate(response)
            text, done = _candidate_text(candidate)
            parts.append(text)
            finished = finished or done
            if candidate is not None and any(candidate.get(f) for f in _CONTINUATION_FIELDS):
                checkpoint = len(parts)
            if isinstance(response.get("usageMetadata"), dict):
                usage = _usage(response)
        if finished or checkpoint is None:
            return with_tokens("".join(parts), usage, complete=finished)
        # A stream cut short after a checkpoint (a chunk with a continuation token) is resumed by
        # google-genai from that checkpoint, which sends again what followed it: the answer up to
        # there is stored, as one stopped with finishReason CONTINUATION is, and the call that
        # resumes it stores the rest.
        return with_tokens("".join(parts[:checkpoint]), usage, complete=True)

    def ends_stream(self, event: SseEvent) -> bool:
        # Most chunks carry no finish reason: the word is looked for before any JSON is parsed.
        found = json_of(event) if "finishReason" in event.data else None
        return found is not None and _first_candidate_text(found)[1]

    def error_body(self, status: int, message: str, code: str | None = None) -> Json:
        state = _STATUSES.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return {"error": {"code": status, "message": message, "status": state}}

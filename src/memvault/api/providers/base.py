"""The one protocol every provider codec implements, and the registry of codecs.

A codec is pure: it turns a provider's request JSON into a ``Conversation``, injects memory into
the provider's own system field, reads the answer out of a response body or stream events, and
renders errors in the provider's envelope. It never stores, searches or sends anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import Conversation, Reply, Turn
from memvault.core.settings import Settings

# A tool call or a tool's result, where it stands in a conversation.
TOOL_TURN = Turn("tool", "")

Json = dict[str, Any]


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


class ProviderCodec(Protocol):
    @property
    def name(self) -> str: ...

    def base_url(self, settings: Settings) -> str:
        """This provider's upstream base URL."""
        ...

    @property
    def key_headers(self) -> tuple[str, ...]:
        """Headers a provider key may travel in (lower case); ``X-Provider-Key`` goes in the first."""
        ...

    def key_value(self, provider_key: str) -> str:
        """``X-Provider-Key`` rendered as the value of ``key_headers[0]``."""
        ...

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        """The conversation in ``body``; ``stream`` is set when the route alone decides it."""
        ...

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        """``body`` without the per-message ``"memory"`` keys, and whether any were removed."""
        ...

    def inject(self, body: Json, context: str) -> Json:
        """A copy of ``body`` with ``context`` added to the native system field only. ``body`` is
        not modified; only the containers on the way to the system field are copied, so large
        inline images are not duplicated."""
        ...

    def reply(self, body: Json) -> Reply:
        """The answer in a complete, non-streamed response body."""
        ...

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        """The answer assembled from a stream's events."""
        ...

    def ends_stream(self, event: SseEvent) -> bool:
        """Whether ``event`` is the stream's last word: nothing after it changes the reply, so the
        turn is complete once it has reached the client, however long the connection stays open."""
        ...

    def error_body(self, status: int, message: str, code: str | None = None) -> Json:
        """``message`` in this provider's own error envelope, with memvault's ``code`` where the
        envelope has a field for one."""
        ...


def require_object(body: object) -> Json:
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    return body


def require_list(body: Mapping[str, Any], field: str) -> list[Any]:
    value = body.get(field)
    if not isinstance(value, list) or not value:
        raise InvalidInput(f"`{field}` must be a non-empty array")
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise InvalidInput(f"`{field}[{index}]` must be an object")
    return value


def remember_flag(message: Mapping[str, Any], where: str) -> bool:
    flag = message.get("memory", True)
    if not isinstance(flag, bool):
        raise InvalidInput(f"`{where}.memory` must be true or false")
    return flag


def strip_flags(body: Json, field: str) -> tuple[Json, bool]:
    entries = body.get(field)
    if not isinstance(entries, list) or not any(isinstance(e, dict) and "memory" in e for e in entries):
        return body, False
    stripped = dict(body)
    stripped[field] = [{k: v for k, v in e.items() if k != "memory"} if isinstance(e, dict) else e for e in entries]
    return stripped, True


def text_of_parts(parts: object, *, kinds: tuple[str, ...] = ("text",)) -> str:
    """Join the text parts (a part whose `type` is one of ``kinds``, or has none) of a content
    array, skipping images, tools, thinking and the like."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if isinstance(part, dict) and part.get("type", kinds[0]) in kinds:
            text = part.get("text")
            if isinstance(text, str):
                texts.append(text)
    return "\n".join(texts)


def append_text(text: str, context: str) -> str:
    return f"{text}\n\n{context}" if text else context


def json_of(event: SseEvent) -> Json | None:
    """The JSON object an event's ``data:`` lines carry; ``None`` for keep-alives and ``[DONE]``."""
    data = event.data.strip()
    if not data.startswith("{"):
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_json_events(events: list[SseEvent]) -> list[Json]:
    """The JSON objects carried by ``data:`` lines; keep-alives and ``[DONE]`` are skipped."""
    return [value for value in map(json_of, events) if value is not None]


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# A provider's token counts for one answer: input (cached included), output, cached input.
Tokens = tuple[int | None, int | None, int | None]
NO_TOKENS: Tokens = (None, None, None)


def sum_of(*values: object) -> int | None:
    """The whole numbers among ``values`` added up; None when there are none."""
    counted = [number for number in map(int_or_none, values) if number is not None]
    return sum(counted) if counted else None


def detail(usage: Mapping[str, Any], field: str, name: str) -> int | None:
    """``usage[field][name]`` when it is a whole number."""
    inner = usage.get(field)
    return int_or_none(inner.get(name)) if isinstance(inner, dict) else None


def with_tokens(text: str, tokens: Tokens, complete: bool = True) -> Reply:
    return Reply(text, tokens[0], tokens[1], complete, tokens[2])


def chat_messages_conversation(body: Json, stream: bool | None) -> Conversation:
    """The conversation of a `messages` array of user/assistant turns (OpenAI and Anthropic alike).
    Tool results (OpenAI `tool` messages, Anthropic `tool_result` blocks) stand ahead of the words
    a message adds, tool calls (`tool_calls`, `tool_use` blocks) after them."""
    turns = []
    for index, message in enumerate(require_list(body, "messages")):
        remember = remember_flag(message, f"messages[{index}]")
        role, content = message.get("role"), message.get("content")
        if role in ("tool", "function") or holds_part(content, "tool_result"):
            turns.append(TOOL_TURN)
        if role in ("user", "assistant"):
            turns.append(Turn(role, text_of_parts(content), remember))
        if message.get("tool_calls") or message.get("function_call") or holds_part(content, "tool_use"):
            turns.append(TOOL_TURN)
    model = body.get("model")
    return Conversation(
        tuple(turns), model if isinstance(model, str) else None, body.get("stream") is True if stream is None else stream
    )


def holds_part(parts: object, kind: str) -> bool:
    """Whether a content array holds a block whose `type` ends in ``kind`` (`tool_use` also finds
    `server_tool_use` and `mcp_tool_use`)."""
    return isinstance(parts, list) and any(
        isinstance(part, dict) and str(part.get("type", "")).endswith(kind) for part in parts
    )

"""OpenAI Responses API: ``instructions`` is the system field, ``input`` a string or a list of
items (messages, tool calls, tool outputs), the answer is the ``output_text`` of ``output``."""

from __future__ import annotations

from memvault.api.providers.base import (
    NO_TOKENS,
    TOOL_TURN,
    Json,
    SseEvent,
    Tokens,
    append_text,
    detail,
    int_or_none,
    json_of,
    parse_json_events,
    remember_flag,
    strip_flags,
    text_of_parts,
    with_tokens,
)
from memvault.api.providers.openai import OpenAICodec
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import Conversation, Reply, Turn

_TEXT_PARTS = ("text", "input_text", "output_text")
# A streamed response ends with one of these; "incomplete" still carries what was said.
_FINAL_EVENTS = ("response.completed", "response.incomplete")


def _output_text(response: Json) -> str:
    texts = []
    for item in response.get("output") or ():
        if isinstance(item, dict) and item.get("type") == "message":
            texts.append(text_of_parts(item.get("content"), kinds=_TEXT_PARTS))
    return "".join(texts)


def _usage(response: Json) -> Tokens:
    """A response's usage (streamed: the final event's `response`)."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return NO_TOKENS
    return (int_or_none(usage.get("input_tokens")), int_or_none(usage.get("output_tokens")),
            detail(usage, "input_tokens_details", "cached_tokens"))


class OpenAIResponsesCodec(OpenAICodec):
    name = "openai-responses"

    def extract(self, body: Json, *, stream: bool | None = None) -> Conversation:
        raw = body.get("input")
        turns: list[Turn] = []
        if isinstance(raw, str):
            turns.append(Turn("user", raw))
        elif isinstance(raw, list):
            for index, item in enumerate(raw):
                if not isinstance(item, dict):
                    raise InvalidInput(f"`input[{index}]` must be an object")
                remember = remember_flag(item, f"input[{index}]")
                # A message item may leave out its type; tool calls, their outputs and reasoning
                # carry no words of the user's or the assistant's own.
                if item.get("type", "message") != "message":
                    turns.append(TOOL_TURN)
                elif item.get("role") in ("user", "assistant"):
                    turns.append(Turn(item["role"], text_of_parts(item.get("content"), kinds=_TEXT_PARTS), remember))
        elif raw is not None:
            raise InvalidInput("`input` must be a string or an array of items")
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise InvalidInput("`instructions` must be a string")
        model = body.get("model")
        return Conversation(
            tuple(turns), model if isinstance(model, str) else None, body.get("stream") is True if stream is None else stream
        )

    def strip_memory_flags(self, body: Json) -> tuple[Json, bool]:
        return strip_flags(body, "input")

    def inject(self, body: Json, context: str) -> Json:
        # Instructions never carry over a previous_response_id chain, so each call gets its own.
        instructions = body.get("instructions")
        return {**body, "instructions": append_text(instructions if isinstance(instructions, str) else "", context)}

    def reply(self, body: Json) -> Reply:
        complete = body.get("status") in (None, "completed", "incomplete")
        return with_tokens(_output_text(body), _usage(body), complete=complete)

    def stream_reply(self, events: list[SseEvent]) -> Reply:
        deltas: list[str] = []
        for event in parse_json_events(events):
            kind = event.get("type")
            if kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
                deltas.append(event["delta"])
            elif kind in _FINAL_EVENTS and isinstance(event.get("response"), dict):
                final = event["response"]
                return with_tokens(_output_text(final) or "".join(deltas), _usage(final))
        return Reply("".join(deltas), complete=False)

    def ends_stream(self, event: SseEvent) -> bool:
        # Most events are deltas: the names are looked for before any JSON is parsed.
        found = json_of(event) if any(name in event.data for name in _FINAL_EVENTS) else None
        return found is not None and found.get("type") in _FINAL_EVENTS


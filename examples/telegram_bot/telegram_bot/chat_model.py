"""Answers through memvault's memory router: an OpenAI-compatible chat completion sent to memvault,
which recalls what matters for this chat, adds it to the system message and forwards the call to
the model. The bot stores its turns itself (through LazyMemory), so the router only reads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memvault.core.ports import HttpClient


class RouterChat:
    def __init__(self, http: HttpClient, memvault_url: str, memory_key: str, llm_api_key: str, model: str) -> None:
        self._http = http
        self._url = f"{memvault_url.rstrip('/')}/v1/chat/completions"
        self._memory_key = memory_key
        self._llm_api_key = llm_api_key
        self._model = model

    async def reply(self, messages: Sequence[dict[str, Any]], session_id: str) -> str:
        headers = [
            ("content-type", "application/json"),
            ("authorization", f"Bearer {self._llm_api_key}"),
            ("x-memory-key", self._memory_key),
            ("x-session-id", session_id),
            ("x-memory-mode", "read"),
        ]
        body = json.dumps({"model": self._model, "messages": list(messages)}).encode("utf-8")
        response = await self._http.send("POST", self._url, headers, body)
        try:
            raw = b"".join([chunk async for chunk in response.aiter_bytes()])
        finally:
            await response.aclose()
        if response.status >= 400:
            raise RuntimeError(f"the model answered {response.status}")
        return str(json.loads(raw)["choices"][0]["message"]["content"])

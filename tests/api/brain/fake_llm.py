"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the brain's judge: each request is
answered by the test's responder, given the system and user prompts; every request is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

Responder = Callable[[str, str], str]


class FakeLlm:
    def __init__(self) -> None:
        self.respond: Responder = lambda system, user: '{"decision": "keep_both", "ids": []}'
        self.delay = 0.0
        self.prompts: list[tuple[str, str]] = []
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self._complete)

    async def _complete(self, request: Request) -> JSONResponse:
        body: dict[str, Any] = await request.json()
        system, user = (m["content"] for m in body["messages"])
        self.prompts.append((system, user))
        if self.delay:
            await asyncio.sleep(self.delay)
        content = self.respond(system, user)
        return JSONResponse({"id": "chat-1", "object": "chat.completion", "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": content}}]})

    def judged(self) -> list[tuple[str, str]]:
        """The prompts about one fact and its neighbours (not the importance ratings)."""
        return [p for p in self.prompts if "EXISTING facts" in p[1]]

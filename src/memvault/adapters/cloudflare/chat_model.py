"""The ``ChatModel`` port over a Workers AI text-generation model (``env.AI``)."""

from __future__ import annotations

import json
from typing import Any

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.core.errors import UpstreamUnavailable


class WorkersAiChat:
    def __init__(self, binding: Any, model: str) -> None:
        self._ai = binding
        self._model = model

    @property
    def model_id(self) -> str:
        return self._model

    async def complete(self, system: str, user: str) -> str:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        result = to_py(await self._ai.run(self._model, to_js({"messages": messages, "temperature": 0})))
        reply = result.get("response") if isinstance(result, dict) else None
        if isinstance(reply, dict | list):
            # Models in JSON mode hand back the parsed object rather than its text.
            return json.dumps(reply)
        if not isinstance(reply, str):
            raise UpstreamUnavailable("Workers AI text model gave no response")
        return reply

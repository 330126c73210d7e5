"""The ``ChatModel`` port over any OpenAI-compatible chat completions server (Ollama,
llama-server, vLLM, a hosted API): one non-streamed completion per prompt."""

from __future__ import annotations

from typing import Any

import httpx

from memvault.core.errors import UpstreamUnavailable


class OpenAICompatibleChat:
    def __init__(self, base_url: str, model: str, api_key: str = "", timeout_seconds: float = 20.0) -> None:
        self._url = base_url.rstrip("/").removesuffix("/v1") + "/v1/chat/completions"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_seconds)

    @property
    def model_id(self) -> str:
        return self._model

    async def complete(self, system: str, user: str) -> str:
        body = {
            "model": self._model,
            "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        try:
            response = await self._client.post(self._url, json=body, headers=self._headers)
        except httpx.HTTPError as exc:
            raise UpstreamUnavailable(f"brain LLM unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise UpstreamUnavailable(f"brain LLM answered {response.status_code}")
        reply: Any = response.json()
        try:
            return str(reply["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError) as exc:
            raise UpstreamUnavailable("brain LLM reply has no message") from exc

    async def aclose(self) -> None:
        await self._client.aclose()

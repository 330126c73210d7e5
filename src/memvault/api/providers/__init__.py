"""Provider codecs, registered in the one mapping the routes and the pipeline look them up in."""

from __future__ import annotations

from collections.abc import Mapping

from memvault.api.providers.anthropic import AnthropicCodec
from memvault.api.providers.base import ProviderCodec
from memvault.api.providers.gemini import GeminiCodec
from memvault.api.providers.openai import OpenAICodec

CODECS: Mapping[str, ProviderCodec] = {
    "openai": OpenAICodec(),
    "anthropic": AnthropicCodec(),
    "gemini": GeminiCodec(),
}

__all__ = ["CODECS", "ProviderCodec"]

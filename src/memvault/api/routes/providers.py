"""The memory router's provider endpoints. Each handler only names its provider and hands the
request to the one pipeline in ``memvault.api.forwarding``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memvault.api.forwarding import forward_with_memory, pass_through, provider_for_listing

router = APIRouter(tags=["memory router"])


@router.post("/v1/chat/completions")
async def openai_chat_completions(request: Request) -> Response:
    """OpenAI chat completions, with memory (streaming when the body says `stream: true`)."""
    return await forward_with_memory(request, "openai")


@router.post("/v1/messages")
async def anthropic_messages(request: Request) -> Response:
    """Anthropic messages, with memory (streaming when the body says `stream: true`)."""
    return await forward_with_memory(request, "anthropic")


# google-genai 3.x calls /v1/models/... when given a custom base URL; the REST docs use /v1beta.
@router.post("/v1beta/models/{model}:generateContent")
@router.post("/v1/models/{model}:generateContent")
async def gemini_generate_content(model: str, request: Request) -> Response:
    """Gemini generateContent, with memory."""
    return await forward_with_memory(request, "gemini", model=model, stream=False)


@router.post("/v1beta/models/{model}:streamGenerateContent")
@router.post("/v1/models/{model}:streamGenerateContent")
async def gemini_stream_generate_content(model: str, request: Request) -> Response:
    """Gemini streamGenerateContent (`alt=sse`), with memory."""
    return await forward_with_memory(request, "gemini", model=model, stream=True)


@router.get("/v1/models")
async def list_models(request: Request) -> Response:
    """The provider's model list, passed through (provider told apart by its key header)."""
    return await pass_through(request, provider_for_listing(request.headers))


@router.get("/v1beta/models")
async def list_gemini_models(request: Request) -> Response:
    """Gemini's model list, passed through."""
    return await pass_through(request, "gemini")


@router.get("/v1/models/{model}")
@router.get("/v1beta/models/{model}")
async def get_model(model: str, request: Request) -> Response:
    """One model's description, passed through."""
    provider = "gemini" if request.url.path.startswith("/v1beta/") else provider_for_listing(request.headers)
    return await pass_through(request, provider)

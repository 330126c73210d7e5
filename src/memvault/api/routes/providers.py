"""The memory router's provider endpoints. Each handler only names its provider and hands the
request to the one pipeline in ``memvault.api.forwarding``: with memory for the calls that
converse, passed through unchanged (after the memory key check) for every other provider
endpoint: counting, embedding, models, files, batches, moderations and the rest of each API."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, WebSocket

from memvault.api.forwarding import forward_with_memory, pass_through, provider_for_listing, refuse_websocket

router = APIRouter(tags=["memory router"])


# google-genai 3.x calls /v1/models/... when given a custom base URL; the REST docs use /v1beta.
GEMINI_PREFIXES = ("/v1beta/models/{model}", "/v1/models/{model}")
GEMINI_PASSTHROUGH_ACTIONS = ("countTokens", "embedContent", "batchEmbedContents")
OTHER_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@router.post("/v1/chat/completions")
async def openai_chat_completions(request: Request) -> Response:
    """OpenAI chat completions, with memory (streaming when the body says `stream: true`)."""
    return await forward_with_memory(request, "openai")


@router.post("/v1/responses")
async def openai_responses(request: Request) -> Response:
    """OpenAI Responses API, with memory added to `instructions` (streaming when the body says so)."""
    return await forward_with_memory(request, "openai-responses")


@router.post("/v1/messages")
async def anthropic_messages(request: Request) -> Response:
    """Anthropic messages, with memory (streaming when the body says `stream: true`)."""
    return await forward_with_memory(request, "anthropic")


@router.post(f"{GEMINI_PREFIXES[0]}:generateContent")
@router.post(f"{GEMINI_PREFIXES[1]}:generateContent")
async def gemini_generate_content(model: str, request: Request) -> Response:
    """Gemini generateContent, with memory."""
    return await forward_with_memory(request, "gemini", model=model, stream=False)


@router.post(f"{GEMINI_PREFIXES[0]}:streamGenerateContent")
@router.post(f"{GEMINI_PREFIXES[1]}:streamGenerateContent")
async def gemini_stream_generate_content(model: str, request: Request) -> Response:
    """Gemini streamGenerateContent (`alt=sse` events or one JSON array), with memory."""
    return await forward_with_memory(request, "gemini", model=model, stream=True)


@router.post("/v1/embeddings")
@router.post("/v1/completions")
@router.post("/v1/responses/input_tokens")
async def openai_passthrough(request: Request) -> Response:
    """OpenAI embeddings, legacy completions and input-token counts: passed through, no memory."""
    return await pass_through(request, "openai")


@router.get("/v1/responses/{response_id}")
@router.delete("/v1/responses/{response_id}")
@router.post("/v1/responses/{response_id}/cancel")
@router.get("/v1/responses/{response_id}/input_items")
async def openai_stored_response(response_id: str, request: Request) -> Response:
    """A stored OpenAI response (retrieve, delete, cancel, input items): passed through."""
    return await pass_through(request, "openai")


@router.post("/v1/messages/count_tokens")
async def anthropic_count_tokens(request: Request) -> Response:
    """Anthropic token counting: passed through, no memory."""
    return await pass_through(request, "anthropic")


async def gemini_passthrough(model: str, request: Request) -> Response:
    """Gemini token counting and embeddings: passed through, no memory."""
    return await pass_through(request, "gemini")


for _prefix in GEMINI_PREFIXES:
    for _action in GEMINI_PASSTHROUGH_ACTIONS:
        router.add_api_route(f"{_prefix}:{_action}", gemini_passthrough, methods=["POST"], name=f"gemini_{_action}")


@router.get("/v1/models")
async def list_models(request: Request) -> Response:
    """The provider's model list, passed through (provider told apart by its key header)."""
    return await pass_through(request, provider_for_listing(request))


@router.get("/v1beta/models")
async def list_gemini_models(request: Request) -> Response:
    """Gemini's model list, passed through."""
    return await pass_through(request, "gemini")


@router.get("/v1/models/{model:model_name}")
@router.get("/v1beta/models/{model:model_name}")
async def get_model(model: str, request: Request) -> Response:
    """One model's description, passed through."""
    provider = "gemini" if request.url.path.startswith("/v1beta/") else provider_for_listing(request)
    return await pass_through(request, provider)


# Last, so every route above is tried first. The SDKs reach far more of each API than the calls
# that converse (files, batches, moderations, stored responses and completions, caches), and an
# app pointed at memvault keeps all of it; none of it is a turn of the user's conversation.
@router.api_route("/v1beta/{rest:any_text}", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/upload/v1beta/{rest:any_text}", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/upload/v1/{rest:any_text}", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/v1/models/{model:model_name}:{action:model_name}", methods=OTHER_METHODS, include_in_schema=False)
async def other_gemini_endpoint(request: Request) -> Response:
    """Any other endpoint of Gemini's API (file uploads too): passed through, no memory."""
    return await pass_through(request, "gemini")


@router.api_route("/v1/messages/{rest:any_text}", methods=OTHER_METHODS, include_in_schema=False)
async def other_anthropic_endpoint(request: Request) -> Response:
    """Any other endpoint under Anthropic's messages (batches): passed through, no memory."""
    return await pass_through(request, "anthropic")


@router.api_route("/v1/{rest:provider_path}", methods=OTHER_METHODS, include_in_schema=False)
async def other_provider_endpoint(request: Request) -> Response:
    """Any other provider endpoint under /v1/ not memvault's own (files, batches, moderations…),
    passed through, no memory; whose it is told by the key header, as for the model list."""
    return await pass_through(request, provider_for_listing(request))


@router.websocket("/{rest:path}")
async def websocket_refused(websocket: WebSocket) -> None:
    """Any WebSocket handshake (the Realtime and Live APIs): refused, nothing forwarded."""
    await refuse_websocket(websocket)

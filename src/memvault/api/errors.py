"""Every error the app answers, rendered once: memvault's envelope ``{"error": {code, message}}``
on its own routes, the provider's own envelope on the provider paths, whatever raised it (a domain
error, request validation, the framework's 404/405/400, or something unexpected)."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memvault.api.path_text import is_own_v1_path
from memvault.api.providers import CODECS
from memvault.core.errors import MemvaultError, RateLimited
from memvault.core.redaction.logs import loggable

log = logging.getLogger("memvault.api")

CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "rate_limited",
}
MESSAGES = {
    400: "the request body could not be read: it is not valid JSON (or not valid UTF-8)",
    404: "no such route",
    405: "this route does not take that method",
}


def error_body(code: str, message: str) -> dict[str, object]:
    return {"error": {"code": code, "message": message}}


def provider_of(path: str) -> str | None:
    """Which provider's clients call ``path``; None for memvault's own routes."""
    if path.startswith(("/upload/v1/", "/upload/v1beta/")):  # Gemini's file uploads
        return "gemini"
    if is_own_v1_path(path) or not path.startswith(("/v1/", "/v1beta/")):
        return None
    if path.startswith("/v1beta/") or ":" in path.rsplit("/", 1)[-1]:
        return "gemini"
    if path.startswith("/v1/messages"):
        return "anthropic"
    return "openai"


def render(path: str, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    provider = provider_of(path)
    body = error_body(code, message) if provider is None else CODECS[provider].error_body(status, message, code)
    return JSONResponse(body, status_code=status, headers=headers)


# A refusal whose wait is longer than this tells clients not to retry it by themselves: the
# official SDKs retry a 429 after its ``Retry-After`` (Anthropic's however long it is), so a key
# over its tokens for the day would otherwise hold the caller's request asleep until midnight.
LONGEST_RETRIED_WAIT_SECONDS = 60


def error_headers(error: MemvaultError) -> dict[str, str]:
    """The headers an error carries: when to try again, for a refusal over a limit, and, when that
    is further off than a minute, that the refused call is not worth retrying on its own
    (``x-should-retry``, the header the OpenAI and Anthropic SDKs obey)."""
    if not isinstance(error, RateLimited):
        return {}
    headers = {"Retry-After": str(error.retry_after)}
    if error.retry_after > LONGEST_RETRIED_WAIT_SECONDS:
        headers["x-should-retry"] = "false"
    return headers


async def _domain(request: Request, exc: MemvaultError) -> JSONResponse:
    return render(request.url.path, exc.status, exc.code, exc.message, error_headers(exc))


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    problems = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            problems.append(f"the request body is not valid JSON (near character {error.get('loc', ('', '?'))[-1]})")
            continue
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
        problems.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return render(request.url.path, 422, "invalid_request", "; ".join(problems))


async def _framework(request: Request, exc: HTTPException) -> JSONResponse:
    status = exc.status_code
    message = MESSAGES.get(status) or (exc.detail if isinstance(exc.detail, str) else "request refused")
    return render(request.url.path, status, CODES.get(status, "error"), message, dict(exc.headers or {}))


async def _client_left(request: Request, exc: ClientDisconnect) -> JSONResponse:
    # A caller that gives up while sending its body is not a failure of ours; nobody reads this.
    log.info("the client left before its request body was whole: %s %s", request.method, loggable(request.url.path))
    return render(request.url.path, 400, "invalid_request", "the request body did not arrive whole")


class UnexpectedErrors:
    """The last word on an exception no handler took: logged by its type only (its text may quote
    stored memory) and answered 500 in the caller's envelope. It is not raised on to the server,
    which would close the connection after the answer, failing a keep-alive client's next request.
    A response already under way is cut off (raised on): its body cannot be completed. One already
    complete is only logged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = finished = False

        async def tracked(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started and not finished:
                raise
            log.error("unexpected %s on %s %s", type(exc).__name__, scope.get("method"), loggable(scope["path"]))
            if not started:
                await render(scope["path"], 500, "internal_error", "memvault failed to answer this request")(
                    scope, receive, send)


def install(app: FastAPI) -> None:
    app.add_exception_handler(MemvaultError, _domain)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _framework)  # type: ignore[arg-type]
    app.add_exception_handler(ClientDisconnect, _client_left)  # type: ignore[arg-type]
    app.add_middleware(UnexpectedErrors)  # added last, so the outermost of the app's own

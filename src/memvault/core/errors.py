"""Domain errors. Each carries the HTTP status it is rendered with at the edge."""

from __future__ import annotations


class MemvaultError(Exception):
    status = 500
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(MemvaultError):
    status = 400
    code = "invalid_request"


class Unauthorized(MemvaultError):
    status = 401
    code = "unauthorized"


class Forbidden(MemvaultError):
    status = 403
    code = "forbidden"


class NotFound(MemvaultError):
    status = 404
    code = "not_found"


class Conflict(MemvaultError):
    status = 409
    code = "conflict"


class PayloadTooLarge(MemvaultError):
    status = 413
    code = "payload_too_large"


class StorageUnavailable(MemvaultError):
    status = 503
    code = "storage_unavailable"


class UpstreamUnavailable(MemvaultError):
    status = 502
    code = "upstream_unavailable"

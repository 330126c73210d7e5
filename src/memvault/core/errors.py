"""Domain errors. Each carries the HTTP status and code it is rendered with at the edge."""

from __future__ import annotations

from typing import Any


class MemvaultError(Exception):
    status = 500
    code = "internal_error"

    def __init_subclass__(cls, status: int = 500, code: str = "internal_error", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.status, cls.code = status, code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(MemvaultError, status=400, code="invalid_request"):
    """The request is malformed or breaks a rule."""


class InvalidField(InvalidInput, status=422, code="invalid_request"):
    """One named field has a value out of its domain (a time that is not a time, say)."""


class Unauthorized(MemvaultError, status=401, code="unauthorized"):
    """No credential, or one nobody issued."""


class Forbidden(MemvaultError, status=403, code="forbidden"):
    """A known credential asking for what it may not do."""


class NotFound(MemvaultError, status=404, code="not_found"):
    """Absent, or behind a wall: the two are never told apart."""


class Conflict(MemvaultError, status=409, code="conflict"):
    """The write contradicts what is stored."""


class WriteRaced(Conflict, status=409, code="conflict"):
    """A write's batch broke a rule of the database (a unique id, a guard) because another write
    changed the same rows after this one was planned: nothing of it was stored, and planned again
    it sees what the other write did."""


class PayloadTooLarge(MemvaultError, status=413, code="payload_too_large"):
    """More than a limit allows."""


class RateLimited(MemvaultError, status=429, code="rate_limited"):
    """A key over one of its limits; nothing of the call ran. ``retry_after`` is in whole seconds."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageUnavailable(MemvaultError, status=503, code="storage_unavailable"):
    """A store could not answer; nothing was half-written."""


class TransientStorageError(StorageUnavailable, status=503, code="storage_unavailable"):
    """A store failed in a way that passes (a lost connection, a reset, a busy database): the same
    call may succeed if it is repeated."""


class StorageFull(MemvaultError, status=507, code="insufficient_storage"):
    """A store ran out of space; the write was rolled back whole."""


class UpstreamUnavailable(MemvaultError, status=502, code="upstream_unavailable"):
    """The provider behind the memory router could not be reached."""


class NotConfigured(MemvaultError, status=503, code="not_configured"):
    """A feature the deployment has not been set up for (a setting it needs is empty)."""


class Undecryptable(MemvaultError, status=500, code="undecryptable"):
    """Sealed data that does not open: tampered, moved to another row, or sealed under a secret
    the deployment no longer has."""


def error_for_status(status: int, message: str) -> MemvaultError:
    """The domain error an HTTP answer with ``status`` stands for, as the edge rendered it (for a
    client reading memvault's answers); a status no error claims keeps its number."""
    kinds = [InvalidInput, Unauthorized, Forbidden, NotFound, Conflict, PayloadTooLarge, InvalidField,
             UpstreamUnavailable, StorageUnavailable, StorageFull, RateLimited]
    for kind in kinds:
        if kind.status == status:
            return kind(message)
    error = MemvaultError(message)
    error.status = status
    return error

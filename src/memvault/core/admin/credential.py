"""Who may run the admin operations: the holder of the admin credential (``MEMVAULT_ADMIN_TOKEN``),
or the operator at the command line, who holds the data folder itself. Without the setting there is
no admin surface at all: its routes answer as a route that does not exist."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from memvault.core.errors import NotFound, Unauthorized
from memvault.core.settings import Settings

# The framework's answer to an unknown path, so a deployment without the setting tells nothing.
NO_SUCH_ROUTE = "no such route"


@dataclass(frozen=True)
class Admin:
    """The admin caller; ``actor`` is what the event log records as having acted."""

    actor: str


TOKEN_HOLDER = Admin("admin-token")
OPERATOR = Admin("cli")


def admin_caller(settings: Settings, token: str | None) -> Admin:
    """The admin caller ``token`` proves, compared in constant time (digests of equal length, so
    neither the length nor a matching prefix shows in the timing)."""
    if not settings.admin_token:
        raise NotFound(NO_SUCH_ROUTE)
    expected = hashlib.sha256(settings.admin_token.encode("utf-8")).digest()
    given = hashlib.sha256((token or "").encode("utf-8")).digest()
    if not hmac.compare_digest(expected, given):
        raise Unauthorized("the admin token is required")
    return TOKEN_HOLDER

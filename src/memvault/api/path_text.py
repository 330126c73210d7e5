"""The path parameters the routes match with a pattern of their own, handed to the handler as
they are. Registered before any route module is imported (``api/routes/__init__.py``)."""

from __future__ import annotations

import re

from starlette.convertors import Convertor, register_url_convertor

# memvault's own paths under /v1/ (its memory, brain, admin and usage APIs); the rest of /v1/ is
# the providers'.
OWN_V1_PATHS = ("memory", "brain", "admin", "usage")
# One of them however a client spells it (`/v1//admin`, `/v1/Admin`): none is ever a provider's,
# so none goes upstream with the credentials the request carries.
_OWN_V1_REST = f"/*(?i:{'|'.join(OWN_V1_PATHS)})"

PATTERNS = {
    # A model name without a `:action`, so `POST models/x:unknownAction` is a 404, not a 405 from
    # the model-description route.
    "model_name": "[^/:]+",
    # The rest of the path whatever it holds (even nothing), slashes and line breaks included (``path`` stops at
    # a line break), so a bad message id reaches the id rule and is refused with a 422, not a 404.
    "any_text": "(?s:.*)",
    # The rest of a /v1/ path that is not memvault's own, so a wrong method on one of memvault's
    # routes stays a 405 rather than reaching the provider.
    "provider_path": f"(?!{_OWN_V1_REST})(?s:.*)",
}


def is_own_v1_path(path: str) -> bool:
    """Whether ``path`` is under one of memvault's own paths of /v1/, however spelled."""
    return path.startswith("/v1/") and re.match(_OWN_V1_REST, path.removeprefix("/v1/")) is not None


class PathText(Convertor[str]):
    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


def register_path_texts() -> None:
    for name, regex in PATTERNS.items():
        # Starlette reads the pattern from the convertor's class.
        register_url_convertor(name, type(f"PathText_{name}", (PathText,), {"regex": regex})())

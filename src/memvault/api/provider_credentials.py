"""Which provider credential a routed call goes upstream with. A call that carries its own (in the
provider's key header, or `X-Provider-Key`) goes with it; a call that carries only its memory key
goes with the key stored for that memory key and provider, if one is (``core/credentials/
provider_keys.py``); a call with neither goes without, and the provider answers it as it answers
any call without a key.

An SDK that is given the memory key as its API key sends it in the provider's key header
(`Authorization: Bearer mk_…`, `x-api-key: mk_…`, `x-goog-api-key: mk_…`): there it names the
memory key, and it is never forwarded upstream."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from urllib.parse import parse_qsl, urlencode

from memvault.api.dependencies import header
from memvault.api.providers import ProviderCodec
from memvault.core.credentials import keys, provider_keys
from memvault.core.deps import Deps

# The provider account a codec's calls are made with, where its name is not the account's.
_ACCOUNT_OF = {"openai-responses": "openai"}
PROVIDER_KEY_HEADER = "X-Provider-Key"


# A memory key or brain credential inside a longer value (their secret part is URL-safe base64).
_CREDENTIAL_INSIDE = re.compile(r"(?<![A-Za-z0-9_-])(?:" + re.escape(keys.PREFIX) + "|" + re.escape(keys.BRAIN_PREFIX)
                                + r")[A-Za-z0-9_-]{16,}")


def _bare(value: str) -> str:
    scheme, _, rest = value.strip().partition(" ")
    return rest.strip() if scheme.lower() == "bearer" and rest.strip() else value.strip()


def holds_memory_key(value: str) -> bool:
    """Whether a provider key header's value is a memory key (``mk_…``, bare or as a bearer)."""
    return keys.is_memory_key(_bare(value))


def holds_memvault_credential(value: str) -> bool:
    """Whether a header's or query parameter's value is or holds a memvault secret (a memory key or
    a stored brain credential: bare, as a bearer, inside another value such as ``token=mk_…``, or in
    a Basic credential's base64): such a value never goes to the provider, a third party."""
    if holds_memory_key(value) or _bare(value).startswith(keys.BRAIN_PREFIX) or _CREDENTIAL_INSIDE.search(value):
        return True
    scheme, _, encoded = value.strip().partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        decoded = base64.b64decode(encoded.strip() + "=" * (-len(encoded.strip()) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return False
    return _CREDENTIAL_INSIDE.search(decoded) is not None


def query_without_credentials(query: str) -> str:
    """The query string as it goes upstream: without a parameter that holds a memvault secret."""
    pairs = parse_qsl(query, keep_blank_values=True)
    kept = [(name, value) for name, value in pairs if not holds_memvault_credential(value)]
    return query if len(kept) == len(pairs) else urlencode(kept)


def query_holds_memory_key(query: str) -> bool:
    """Whether a query parameter holds a memory key (as Gemini's REST examples put their key in `?key=`).
    It names no caller: a query string is kept by every log and proxy on its way."""
    return any(holds_memory_key(value) for _, value in parse_qsl(query, keep_blank_values=True))


def names_gemini_key(query: str) -> bool:
    """Whether the query carries a provider credential as Gemini's REST API takes one: `?key=`."""
    return any(name == "key" for name, _ in parse_qsl(query_without_credentials(query)))


def memory_key_in_key_header(headers: Mapping[str, str], codec: ProviderCodec) -> str | None:
    """The memory key an SDK sent as its API key, in the provider's key header; None if none did."""
    for name in codec.key_headers:
        value = header(headers, name)
        if value is not None and holds_memory_key(value):
            return _bare(value)
    return None


def carries_own_credential(headers: Mapping[str, str], codec: ProviderCodec, query: str) -> bool:
    """Whether the call carries a provider credential of its own (a memory key is none)."""
    if header(headers, PROVIDER_KEY_HEADER) is not None:
        return True
    if any((value := header(headers, name)) is not None and not holds_memory_key(value) for name in codec.key_headers):
        return True
    return codec.name == "gemini" and names_gemini_key(query)


async def with_stored_credential(deps: Deps, key_id: str | None, codec: ProviderCodec, incoming: Mapping[str, str],
                                 query: str, outgoing: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``outgoing`` (the headers forwarded, memory keys already dropped) with the stored provider
    key added when the call carries none of its own."""
    if key_id is None or carries_own_credential(incoming, codec, query):
        return list(outgoing)
    stored = await provider_keys.key_for_call(deps, key_id, _ACCOUNT_OF.get(codec.name, codec.name))
    if stored is None:
        return list(outgoing)
    return [*outgoing, (codec.key_headers[0], codec.key_value(stored))]

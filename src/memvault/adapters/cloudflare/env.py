"""Reading the Worker's ``env``: bindings, vars and secrets, as the SDK hands them over. Binding
names live here, with the adapters that use them, never in core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memvault.core.operations.health import PlatformReport, presence
from memvault.core.settings import RETIRED, SETTINGS, Settings, load_settings, retired_settings

# The bindings wrangler.toml declares; each must be present for the Worker to serve.
REQUIRED_BINDINGS: tuple[str, ...] = ("DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE")
# `[version_metadata]` in wrangler.toml: the id of the Worker version serving the request.
VERSION_METADATA = "CF_VERSION_METADATA"


# The Python Workers SDK hands ``env`` over wrapped: reading an attribute gives a var or secret as
# is, and most bindings inside a wrapper that converts values on every call. The Cloudflare adapters
# speak the documented JS binding APIs and convert at their own boundary (as the Pyodide tier tests
# them over the real SDK), so they are given the JS object, which the SDK's public ``python_to_rpc``
# hands back for each binding wrapper (and for a JS object, the object itself). A Durable Object
# namespace wrapper is used as it is: it forwards ``idFromName`` and wraps each stub ``get`` returns,
# and ``RpcStub`` takes the stub's JS object the same way.


def js_binding(value: Any) -> Any:
    """The JS object of a binding (D1, R2, KV, Workers AI, Vectorize, a service binding, a Durable
    Object's storage or stub), whether the SDK handed it over wrapped or not; None stays None."""
    # Imported here: this module also loads on CPython (runtime/workers.py imports it); these do not.
    from pyodide.ffi import JsProxy
    from workers import python_to_rpc

    # A JS object stays as it is: python_to_rpc would walk an RPC stub, which answers to any name
    # (``next`` included) as if it were an iterator.
    if value is None or isinstance(value, JsProxy):
        return value
    return python_to_rpc(value)


def env_value(env: Any, name: str) -> Any:
    """One entry of the Worker's ``env`` (a var, a secret or a binding, as the SDK hands it over),
    or None when absent."""
    try:
        value = getattr(env, name)
    except AttributeError:
        return None
    # JS undefined/null arrive as None or as Pyodide's jsnull, whose repr is "null".
    if value is None or type(value).__name__ == "JsNull" or repr(value) == "null":
        return None
    return value


def invocation_props(ctx: Any) -> dict[str, Any]:
    """``ctx.props``: what the caller's service binding declares about it (empty when none)."""
    # Imported here: this module also loads on CPython (runtime/workers.py imports it), js does not.
    from memvault.adapters.cloudflare.convert import to_py

    props = to_py(getattr(ctx, "props", None))
    return props if isinstance(props, dict) else {}


def env_settings(env: Any) -> Settings:
    """Settings from the Worker's vars and secrets; missing ones take their defaults."""
    values = {setting.name: env_value(env, setting.name) for setting in SETTINGS}
    return load_settings({name: str(value) for name, value in values.items() if value is not None})


def env_retired_settings(env: Any) -> tuple[str, ...]:
    """The retired ``MEMVAULT_*`` variables the Worker's env still sets (names only)."""
    return retired_settings({name: env_value(env, name) for name in RETIRED})


def platform_report(env: Any, settings: Settings, crons: Sequence[str]) -> PlatformReport:
    """Which bindings and secrets the Worker has (presence only, values never leave ``env``), how
    many cron triggers its bundle was built with (``crons``, adapters/cloudflare/triggers.py), and
    which retired variables it still sets."""
    lookup = {name: env_value(env, name) for name in (*REQUIRED_BINDINGS, *settings.required_secrets)}
    return PlatformReport(
        runtime="workers",
        bindings=presence(REQUIRED_BINDINGS, lookup),
        secrets=presence(settings.required_secrets, lookup),
        cron_triggers=len(crons),
        crons=tuple(crons),
        version_id=version_id(env),
        retired_settings=env_retired_settings(env),
    )


def version_id(env: Any) -> str | None:
    """The id of the Worker version this isolate runs (its version-metadata binding), or None."""
    metadata = env_value(env, VERSION_METADATA)
    found = metadata.get("id") if isinstance(metadata, dict) else getattr(metadata, "id", None)
    return found if isinstance(found, str) and found else None

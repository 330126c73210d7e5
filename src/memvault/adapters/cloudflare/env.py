"""Reading the Worker's ``env``: bindings, vars and secrets, through the SDK's wrappers. Binding
names live here, with the adapters that use them, never in core."""

from __future__ import annotations

from typing import Any

from memvault.core.health import PlatformReport, presence
from memvault.core.settings import SETTINGS, Settings, load_settings

# The bindings wrangler.toml declares; each must be present for the Worker to serve.
REQUIRED_BINDINGS: tuple[str, ...] = ("DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE")


# The Python Workers SDK hands ``env``, a Durable Object's ``ctx`` and some bindings over inside
# Python wrappers that convert values on every call, and what they wrap has changed between SDK
# releases. The Cloudflare adapters speak the documented JS binding APIs and convert at their own
# boundary (as the Pyodide tier tests them), so they are given the JS object underneath.
_SDK_WRAPPERS = {
    "_EnvWrapper": "_env",
    "DurableObjectContext": "_ctx",
    "_BindingWrapper": "_binding",
    "_DurableObjectNamespaceWrapper": "_binding",
    "_FetcherWrapper": "_binding",
}


def raw_js(value: Any) -> Any:
    """The JS object inside an SDK wrapper; anything else unchanged."""
    field = _SDK_WRAPPERS.get(type(value).__name__)
    # Read the instance dict: the wrappers forward unknown attributes to JS.
    inner = vars(value).get(field) if field is not None and hasattr(value, "__dict__") else None
    return value if inner is None else raw_js(inner)


def env_value(env: Any, name: str) -> Any:
    """One entry of the Worker's ``env`` (a var, a secret or a binding), or None when absent."""
    try:
        value = raw_js(getattr(raw_js(env), name))
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

    props = to_py(getattr(raw_js(ctx), "props", None))
    return props if isinstance(props, dict) else {}


def env_settings(env: Any) -> Settings:
    """Settings from the Worker's vars and secrets; missing ones take their defaults."""
    values = {setting.name: env_value(env, setting.name) for setting in SETTINGS}
    return load_settings({name: str(value) for name, value in values.items() if value is not None})


def platform_report(env: Any, settings: Settings) -> PlatformReport:
    """Which bindings and secrets the Worker has: presence only, values never leave ``env``."""
    lookup = {name: env_value(env, name) for name in (*REQUIRED_BINDINGS, *settings.required_secrets)}
    return PlatformReport(
        runtime="workers",
        bindings=presence(REQUIRED_BINDINGS, lookup),
        secrets=presence(settings.required_secrets, lookup),
        cron_triggers=len(settings.cron_schedules),
    )

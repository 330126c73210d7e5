"""`memvault serve|mcp`: the long-running processes over a data folder."""

from __future__ import annotations

from pathlib import Path

import click

from memvault.cli.shell import CommandError, data_dir_option, environment, key_option, open_folder, say, with_deps
from memvault.core.credentials.callers import CallerTokens
from memvault.core.deps import Deps

BRAIN_TOKEN_VARIABLE = "MEMVAULT_BRAIN_TOKEN"


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8787, show_default=True, help="The port to listen on.")
@data_dir_option
def serve(host: str, port: int, data_dir: Path | None) -> None:
    """Serve the HTTP API until stopped.

    The memory routes, the memory router (OpenAI, Anthropic, Gemini), the brain, MCP at /mcp, the
    portal and the API docs at /docs, over the data folder."""
    import uvicorn

    from memvault.cli.server_limits import bounded_protocol, fd_budget, logging_config
    from memvault.runtime.local import create_local_app

    folder, settings = open_folder(data_dir, create=True)
    _require_free(host, port)
    budget = fd_budget(settings.open_vaults)
    if budget.open_vaults < settings.open_vaults:
        say(f"warning: the open-file limit ({budget.fd_limit}) leaves room for {budget.open_vaults} open vaults, "
            f"not the {settings.open_vaults} MEMVAULT_OPEN_VAULTS asks for")
    say(f"serving on http://{host}:{port} (stop with Ctrl-C)")
    # The app dates its responses itself; a relayed provider response keeps the provider's Server.
    app = create_local_app({**environment(folder), "MEMVAULT_OPEN_VAULTS": str(budget.open_vaults)})
    uvicorn.run(app, host=host, port=port, log_level=settings.log_level, server_header=False, date_header=False,
                http=bounded_protocol(budget.connections, settings.idle_connection_seconds),
                timeout_keep_alive=max(1, round(settings.idle_connection_seconds)),
                log_config=logging_config(settings.log_level))


def _require_free(host: str, port: int) -> None:
    """Refuse to start on an address something else listens on, before saying it serves there: a
    newcomer's calls would otherwise reach that other server (and its keys) instead."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise CommandError(f"cannot serve on {host}: {exc.strerror or exc}") from exc
    family, kind, _, _, address = infos[0]
    with socket.socket(family, kind) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server's own socket does
        try:
            probe.bind(address)
        except OSError as exc:
            raise CommandError(f"cannot serve on {host}:{port}: {exc.strerror or exc}; stop what listens there, "
                               "or serve on another port with --port N (scripts/dev --port N)") from exc


@click.command("mcp")
@key_option
@click.option("--brain-token", envvar=BRAIN_TOKEN_VARIABLE, show_envvar=True,
              help="The brain credential for the brain tools and fact resources.")
@data_dir_option
def mcp(key: str | None, brain_token: str | None, data_dir: Path | None) -> None:
    """Serve MCP over stdio for one key and brain credential.

    The memory and brain tools and the fact resources; the key and the credential are checked on
    every call, so a wrong one is a tool error the client shows."""

    async def work(deps: Deps) -> None:
        from memvault.api.mcp.stdio import serve_stdio
        from memvault.api.mcp.tools import mcp_server
        from memvault.runtime.local import closing_idle_vaults, start_local

        await start_local(deps)
        tokens = CallerTokens(memory_key=key or None, brain_token=brain_token or None)
        say("serving MCP on stdio")
        # A wrong or revoked secret is a tool error the client shows, not a refusal to start.
        async with closing_idle_vaults(deps):
            await serve_stdio(mcp_server(deps, lambda _: tokens), deps.settings.max_body_bytes)

    with_deps(data_dir, work)

"""Where `memvault keys` and `memvault brain-token` act: the local data folder, or with `--url` a
deployed memvault through its admin surface (`/v1/admin/…`, the admin token from
``MEMVAULT_ADMIN_TOKEN``). Either way the same core admin operation runs and answers the same
result, so a command prints the same thing for both."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memvault.cli.shell import CommandError, say, with_deps
from memvault.core.admin import AdminOperation, perform
from memvault.core.admin.credential import OPERATOR, Admin
from memvault.core.deps import Deps
from memvault.core.settings import SETTINGS, load_settings
from memvault.core.shapes import plain_object
from memvault.core.usage.operations import UsageOperation
from memvault.core.usage.operations import perform as perform_usage

F = TypeVar("F", bound=Callable[..., Any])
ADMIN_TOKEN_VARIABLE = next(s.name for s in SETTINGS if s.field == "admin_token")


def url_option(command: F) -> F:
    return click.option(
        "--url", metavar="URL", default=None,
        help=f"Manage the memvault deployed at URL (its admin surface, with the token in ${ADMIN_TOKEN_VARIABLE}) "
        "instead of the data folder.",
    )(command)


def admin_call(url: str | None, data_dir: Path | None, operation: AdminOperation[Any, Any] | UsageOperation[Admin, Any, Any],
               data: dict[str, Any], create: bool = False) -> dict[str, Any]:
    """``operation`` on ``data``, run on the deployment at ``url`` or else in the data folder."""
    if url is None:
        async def local(deps: Deps) -> dict[str, Any]:
            if isinstance(operation, UsageOperation):
                return plain_object(await perform_usage(deps, OPERATOR, operation, data))
            return plain_object(await perform(deps, OPERATOR, operation, data))

        return with_deps(data_dir, local, create=create)
    if data_dir is not None:
        raise CommandError("--url and --data-dir name two different places: give one")
    return asyncio.run(_remote(url, operation.name, data))


async def _remote(url: str, operation: str, data: dict[str, Any]) -> dict[str, Any]:
    from memvault.adapters.local.http_client import HttpxClient
    from memvault.client.admin import AdminClient

    if not url.startswith(("https://", "http://")):
        raise CommandError(f"--url must be an http(s) address, got {url!r}")
    token = load_settings(os.environ).admin_token
    if not token:
        raise CommandError(f"--url needs the deployment's admin token in {ADMIN_TOKEN_VARIABLE}")
    say(f"memvault at {url.rstrip('/')}")
    http = HttpxClient()
    try:
        return await AdminClient(http, url, token).call(operation, data)
    finally:
        await http.aclose()

"""One default TLS context per test process for every httpx client: the suite's own, and the ones
the official SDKs make (OpenAI's, Anthropic's, Gemini's and MCP's, on the httpx2 fork). Both read
a whole CA bundle into a new context for each client they make: about 50 ms of CPU a client, for
clients that only ever speak plain HTTP to 127.0.0.1 (a test calling ``httpx.get`` in a poll loop
paid it at every poll). A context asked for with other arguments (``verify`` given, a client
certificate) is made as the library makes it."""

from __future__ import annotations

import functools
import importlib
import os
import ssl
from collections.abc import Callable
from typing import Any

MakeContext = Callable[..., ssl.SSLContext]


def _shared(made_by_library: MakeContext) -> MakeContext:
    @functools.cache
    def default_context(trust_env: bool, cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
        # The variables the libraries read are part of the key: a test setting one gets what it names.
        return made_by_library(True, None, trust_env)

    def context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if verify is True and cert is None:
            return default_context(trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        return made_by_library(verify, cert, trust_env)

    return context


def install() -> None:
    # Each library's transports call the name they imported; Gemini's SDK calls the package's own.
    for package in ("httpx", "httpx2"):
        try:
            library = importlib.import_module(package)
            transports = importlib.import_module(f"{package}._transports.default")
        except ImportError:
            continue
        shared = _shared(library.create_ssl_context)
        library.create_ssl_context = transports.create_ssl_context = shared

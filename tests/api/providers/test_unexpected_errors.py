"""A failure nobody foresaw is a 500 in the caller's envelope, logged by its type only, and the
connection it came on keeps serving: a keep-alive client's next request on it is answered."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import ServerThread

from memvault.api.app import create_app
from memvault.core.credentials.keys import create_key
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps

LEAKED = "the vault said: card 4111 1111 1111 1111"


class BrokenVaults:
    """A vault directory whose every vault fails in a way no handler knows."""

    def vault(self, name: str) -> Any:
        raise RuntimeError(LEAKED)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[ServerThread, str]]:
    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
    _, secret = asyncio.run(create_key(deps.db, "unexpected", deps.clock()))
    with ServerThread(create_app(dataclasses.replace(deps, vaults=BrokenVaults()))) as server:  # type: ignore[arg-type]
        yield server, secret


def exchange(connection: socket.socket, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one request on ``connection`` and read its whole answer (Content-Length framed)."""
    connection.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, "the server closed the connection before answering"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        chunk = connection.recv(65536)
        assert chunk, "the server closed the connection inside an answer"
        body += chunk
    return int(lines[0].split()[1]), headers, body


def test_an_unexpected_failure_is_a_500_and_the_connection_serves_the_next_request(
    served: tuple[ServerThread, str], caplog: pytest.LogCaptureFixture
) -> None:
    server, secret = served
    failing = (f"GET /v1/memory/stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n\r\n").encode()
    healthy = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        for _ in range(3):
            status, headers, body = exchange(connection, failing)
            assert status == 500 and headers.get("connection", "").lower() != "close"
            assert json.loads(body) == {"error": {"code": "internal_error",
                                                  "message": "memvault failed to answer this request"}}
            status, _, body = exchange(connection, healthy)
            assert status == 200, body
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "unexpected RuntimeError on GET /v1/memory/stats" in logged
    assert "4111" not in logged and "4111" not in "\n".join(str(r.exc_info) for r in caplog.records)

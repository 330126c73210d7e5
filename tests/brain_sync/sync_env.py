"""Shared by the brain_sync tests (a plain module, not a conftest): the real server (`memvault
serve` on 127.0.0.1) with brain credentials, the script's package, and helpers over real folders."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT / "scripts", ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from brain_folder.placement import Placer  # noqa: E402
from brain_folder.pull import pull  # noqa: E402
from brain_folder.push import push  # noqa: E402
from brain_folder.remote import Brain  # noqa: E402
from brain_folder.report import Report  # noqa: E402

from local_http import memvault_serve  # noqa: E402

ALL_SCOPES = ["business", "family", "personal", "shared"]
# name -> (scopes, writer); the token of NAME is "tok-NAME".
CREDENTIALS = {
    "writer": (ALL_SCOPES, True),
    "family+shared-writer": (["family", "shared"], True),
    "reader": (ALL_SCOPES, False),
}


def doc_blocks(kind: str) -> list[str]:
    """The ``kind`` code blocks of docs/brain-sync.md, each as the page shows it."""
    page = (ROOT / "docs" / "brain-sync.md").read_text(encoding="utf-8")
    return [match + "\n" for match in re.findall(rf"^```{kind}\n(.*?)\n```$", page, flags=re.M | re.S)]


def token(name: str) -> str:
    return f"tok-{name}"


@dataclass
class Server:
    url: str

    def headers(self, name: str = "writer") -> dict[str, str]:
        return {"Authorization": f"Bearer {token(name)}"}

    def export(self) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/v1/brain/export", headers=self.headers(), timeout=30)
        assert response.status_code == 200, response.text
        return [json.loads(line) for line in response.text.splitlines()]

    def current(self) -> dict[str, dict[str, Any]]:
        """Each current fact by source."""
        return {row["source"]: row for row in self.export() if row["current"]}

    def register_skill(self, **skill: str) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/v1/brain/skills", json=skill, headers=self.headers(), timeout=30)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    def skills(self) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.url}/v1/brain/skills", headers=self.headers(), timeout=30)
        listed: list[dict[str, Any]] = response.json()["skills"]
        return listed


@contextmanager
def served(data: Path) -> Iterator[Server]:
    credentials = {hashlib.sha256(token(name).encode()).hexdigest(): {"name": name, "scopes": scopes, "writer": writer}
                   for name, (scopes, writer) in CREDENTIALS.items()}
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMVAULT_")}
    env.update(MEMVAULT_DATA_DIR=str(data), MEMVAULT_EMBEDDER="hash",
               MEMVAULT_BRAIN_CREDENTIALS=json.dumps(credentials))
    with memvault_serve(env) as url:
        yield Server(url)


@asynccontextmanager
async def brain_of(server: Server, name: str = "writer",
                   transport: httpx.AsyncBaseTransport | None = None) -> AsyncIterator[Brain]:
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers(name), timeout=60,
                                 transport=transport) as client:
        yield Brain(client)


async def push_folder(server: Server, folder: Path, name: str = "writer", scope: str = "shared",
                      entry_type: str = "reference", **options: bool) -> Report:
    async with brain_of(server, name) as brain:
        return await push(brain, folder, Placer(folder, scope, entry_type), **options)


async def pull_folder(server: Server, folder: Path, name: str = "writer", **options: bool) -> Report:
    async with brain_of(server, name) as brain:
        return await pull(brain, folder, Placer(folder, "shared", "reference"), **options)


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (the manifest too), by relative path; links by their target."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[relative] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[relative] = path.read_bytes()
    return found


def run_script(*args: str, token_name: str = "writer", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMVAULT_")}
    env["MEMVAULT_BRAIN_TOKEN"] = token(token_name)
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "brain_sync.py"), *args], env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)

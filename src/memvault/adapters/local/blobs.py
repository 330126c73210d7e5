"""The ``BlobStore`` port over files under one folder: the local image of R2."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path, PurePosixPath

from memvault.core.errors import InvalidInput


class LocalBlobStore:
    def __init__(self, root: Path | str) -> None:
        self._root = Path(root)

    def _path(self, key: str) -> Path:
        parts = PurePosixPath(key).parts
        # Keys are R2-style paths; anything that could step outside the folder is refused.
        if not key or key.startswith("/") or "\\" in key or any(p in {"..", "."} for p in parts):
            raise InvalidInput(f"invalid blob key {key!r}")
        return self._root.joinpath(*parts)

    def _put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a reader never sees half a blob.
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def _get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None

    async def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        await asyncio.to_thread(self._put, key, bytes(data))

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, key)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._path(key).unlink, True)

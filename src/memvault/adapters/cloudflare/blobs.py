"""The ``BlobStore`` port over an R2 bucket binding."""

from __future__ import annotations

from typing import Any

from memvault.adapters.cloudflare.convert import bytes_of, is_missing, js_bytes, to_js
from memvault.adapters.cloudflare.failures import binding_errors


class R2BlobStore:
    def __init__(self, binding: Any) -> None:
        self._bucket = binding

    async def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        with binding_errors("R2"):
            await self._bucket.put(key, js_bytes(bytes(data)), to_js({"httpMetadata": {"contentType": content_type}}))

    async def get(self, key: str) -> bytes | None:
        with binding_errors("R2"):
            found = await self._bucket.get(key)
            if is_missing(found):
                return None
            return bytes_of(await found.arrayBuffer())

    async def delete(self, key: str) -> None:
        with binding_errors("R2"):
            await self._bucket.delete(key)

"""The embedded local mode: sqlite3, files, numpy, onnxruntime, asyncio, httpx."""

"""The memory client for other Workers and apps. ``MemoryClient`` speaks memvault's client
interface over a service binding (``RpcTransport``) or HTTP (``HttpTransport``); ``LazyMemory`` is
the write-behind memory a Durable Object agent holds. It imports neither FastAPI nor pydantic, only
memvault's core floor, so it loads in Pyodide; the platform parts (the service binding's stub, the
Durable Object's SQL, ``waitUntil``, fetch) are handed in through core's ports."""

from memvault.client.lazy import Delivery, LazyMemory, Recall
from memvault.client.memory_client import Clockwork, MemoryClient
from memvault.client.transports import HttpTransport, RpcCaller, RpcTransport, Transport

__all__ = [
    "Clockwork",
    "Delivery",
    "HttpTransport",
    "LazyMemory",
    "MemoryClient",
    "Recall",
    "RpcCaller",
    "RpcTransport",
    "Transport",
]

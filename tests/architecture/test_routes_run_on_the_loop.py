"""Every route's handler and every dependency it resolves is a coroutine function: FastAPI runs a
plain function on a worker thread, and on a busy server each such hop waits for a thread to be
scheduled and to take the interpreter back before the call goes on."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from starlette.routing import BaseRoute

from memvault.api.app import create_app
from memvault.core.deps import Deps


def calls(dependant: Dependant) -> Iterator[tuple[str, Any]]:
    for dependency in dependant.dependencies:
        if dependency.call is not None:
            yield getattr(dependency.call, "__name__", type(dependency.call).__name__), dependency.call
        yield from calls(dependency)


def routes(candidates: list[BaseRoute]) -> Iterator[Any]:
    """Each route as FastAPI serves it: an included router's routes carry the dependencies the
    inclusion adds (``effective_route_contexts``)."""
    for route in candidates:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is not None:
            # A WebSocket route's context carries no dependant: it resolves no dependencies.
            yield from (context for context in contexts() if context.dependant is not None)
        elif hasattr(route, "dependant"):
            yield route


def runs_on_the_loop(call: Any) -> bool:
    # A security scheme is an instance whose ``__call__`` is the coroutine function.
    return inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(type(call).__call__)


def test_no_route_handler_or_dependency_runs_on_a_worker_thread(deps: Deps) -> None:
    served = list(routes(create_app(deps).routes))
    assert len(served) > 50
    threaded = {(route.path, name) for route in served for name, call in
                [(route.name, route.endpoint), *calls(route.dependant)] if not runs_on_the_loop(call)}
    assert threaded == set()

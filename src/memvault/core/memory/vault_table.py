"""The vault's operations, declared once: each method of the ``VaultClient`` port is an operation,
carried out by the ``VaultStore`` method of the same name and signature (a test holds the two
alike). The rest is derived here: the local wrapper and the Durable Object client answer every
operation through ``VaultCalls``, and the Durable Object serves each one as an RPC method of that
name through ``serve``. What crosses the RPC boundary is plain data, converted by the port
method's annotations just as the models convert their fields. So a new operation is one port
method and one store method."""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_type_hints

from memvault.core.memory.store import VaultStore
from memvault.core.models import Converter, converter, to_plain
from memvault.core.ports import VaultClient

VAULT_OPERATIONS: tuple[str, ...] = tuple(
    name for name, member in vars(VaultClient).items() if inspect.isfunction(member) and not name.startswith("_")
)


@dataclass(frozen=True)
class VaultOperation:
    name: str
    signature: inspect.Signature  # the port method's, without self
    arguments: tuple[Converter, ...]  # plain data -> the value of each parameter
    result: Converter  # plain data -> the result

    def plain_arguments(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
        """A call's arguments as plain data: one a parameter, in order, defaults filled in but for
        trailing ones left at their default, which are not sent (a vault one deploy behind, without
        the parameters added since, takes the call)."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        parameters = list(self.signature.parameters.values())
        while values and parameters[len(values) - 1].default is not inspect.Parameter.empty \
                and values[-1] is parameters[len(values) - 1].default:
            values.pop()
        return [to_plain(value) for value in values]

    def arguments_of(self, plain: Sequence[Any]) -> list[Any]:
        """The store's arguments from plain ones. Parameters left out take their defaults: a
        caller one deploy behind does not send the ones added since."""
        parameters = list(self.signature.parameters.values())
        left_out = parameters[len(plain) :]
        if len(plain) > len(parameters) or any(p.default is inspect.Parameter.empty for p in left_out):
            raise TypeError(f"vault operation {self.name} takes {len(parameters)} arguments, got {len(plain)}")
        converted = [convert(value) for convert, value in zip(self.arguments, plain, strict=False)]
        return converted + [p.default for p in left_out]


def vault_operation(name: str) -> VaultOperation:
    """The operation ``name``; AttributeError for any other name (so ``VaultCalls`` has no other
    attribute)."""
    if name not in VAULT_OPERATIONS:
        raise AttributeError(f"a vault has no operation {name!r}")
    return _operation(name)


@functools.cache
def _operation(name: str) -> VaultOperation:
    # Worked out on first use: importing this module only defines things.
    method = getattr(VaultClient, name)
    hints = get_type_hints(method)
    parameters = list(inspect.signature(method).parameters.values())[1:]  # without self
    return VaultOperation(
        name,
        inspect.Signature(parameters),
        tuple(converter(hints[p.name]) for p in parameters),
        converter(hints["return"]),
    )


def serve(store: VaultStore, name: str, plain: Sequence[Any]) -> Any:
    """Carry out one operation received as plain data, and answer in plain data: the Durable
    Object's side of a call."""
    operation = vault_operation(name)
    return to_plain(getattr(store, name)(*operation.arguments_of(plain)))


class VaultCalls(ABC):
    """A ``VaultClient`` whose every operation is answered by ``_run``."""

    def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
        operation = vault_operation(name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self._run(operation, args, kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    @abstractmethod
    async def _run(self, operation: VaultOperation, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


class PlainDataVault(VaultCalls):
    """A vault reached by plain-data calls: ``send(name, *arguments)`` delivers an operation to
    where ``serve`` carries it out, and returns the plain answer."""

    def __init__(self, send: Callable[..., Awaitable[Any]]) -> None:
        self._send = send

    async def _run(self, operation: VaultOperation, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return operation.result(await self._send(operation.name, *operation.plain_arguments(args, kwargs)))

"""Type-keyed services over ``dependency_injector`` providers, closed in reverse order of creation.

dependency-injector (with PyYAML, which its providers module imports) loads when the first service is
resolved, overridden or exported as a container, not when one is registered: ``runiq status`` builds a
host whose services it never resolves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from runiq.logging import get_logger

if TYPE_CHECKING:
    # Only the providers: ``dependency_injector.containers`` imports its wiring module, which imports
    # FastAPI whenever it is installed (about 0.3 s of every command's start-up, measured).
    from dependency_injector import containers, providers

__all__ = ["ServiceCloser", "ServiceProvider"]

T = TypeVar("T")
ServiceCloser = Callable[[T], Awaitable[object]]

log = get_logger(__name__)


def _providers() -> Any:
    """``dependency_injector.providers``, imported on first use."""
    from dependency_injector import providers

    return providers


def _slot(service_type: type[Any]) -> str:
    return f"{service_type.__module__}.{service_type.__qualname__}".replace(".", "__")


class ServiceProvider:
    """Resolves services by type: ``services.get(RagRetriever)``. Singletons are created on first use.

    A singleton registered with ``close=`` is closed by :meth:`aclose` (which the host calls when it
    stops) if and only if it was created, in reverse order of creation, so a service closes before the
    services it was built from. Instances added with :meth:`add_instance` belong to the caller.
    """

    def __init__(self) -> None:
        self._registrations: dict[str, Callable[[], providers.Provider[Any]]] = {}
        self._providers: dict[str, providers.Provider[Any]] = {}  # made from the registrations on first use
        self._types: dict[type[Any], str] = {}
        self._created: list[tuple[type[Any], Callable[[], Awaitable[object]]]] = []
        self._frozen = False

    @property
    def container(self) -> containers.DynamicContainer:
        """A container over the same providers, for overriding them in tests (``override``)."""
        from dependency_injector import containers

        container = containers.DynamicContainer()
        container.set_providers(**{name: self._provider_named(name) for name in self._registrations})
        return container

    def add_singleton(
        self,
        service_type: type[T],
        factory: Callable[[ServiceProvider], T],
        *,
        close: ServiceCloser[T] | None = None,
    ) -> None:
        """Register ``factory``; ``close``, if given, is awaited with the instance when the services close."""
        self._add(service_type, lambda: _providers().Singleton(self._creating, service_type, factory, close))

    def try_add_singleton(
        self,
        service_type: type[T],
        factory: Callable[[ServiceProvider], T],
        *,
        close: ServiceCloser[T] | None = None,
    ) -> None:
        """Register ``factory`` unless the application already registered ``service_type`` (TryAdd)."""
        if service_type not in self._types:
            self.add_singleton(service_type, factory, close=close)

    def _creating(
        self, service_type: type[T], factory: Callable[[ServiceProvider], T], close: ServiceCloser[T] | None
    ) -> T:
        instance = factory(self)
        if close is not None:
            self._created.append((service_type, lambda: close(instance)))
        return instance

    def override(self, service_type: type[T], instance: T) -> None:
        """Replace a registered service with ``instance`` (tests); ``reset_override`` undoes it."""
        self._provider(service_type).override(_providers().Object(instance))

    def reset_override(self, service_type: type[T]) -> None:
        self._provider(service_type).reset_override()

    def _provider(self, service_type: type[Any]) -> providers.Provider[Any]:
        name = self._types.get(service_type)
        if name is None:
            raise LookupError(f"No service is registered for {service_type.__qualname__}.")
        return self._provider_named(name)

    def _provider_named(self, name: str) -> providers.Provider[Any]:
        provider = self._providers.get(name)
        if provider is None:
            provider = self._providers[name] = self._registrations[name]()
        return provider

    def add_instance(self, service_type: type[T], instance: T) -> None:
        self._add(service_type, lambda: _providers().Object(instance))

    def _add(self, service_type: type[Any], provider: Callable[[], providers.Provider[Any]]) -> None:
        if self._frozen:
            raise RuntimeError("Services cannot be added after the host is built.")
        name = _slot(service_type)
        self._types[service_type] = name
        self._registrations[name] = provider
        self._providers.pop(name, None)  # a registration replaces the provider made from an earlier one

    def freeze(self) -> None:
        self._frozen = True

    def __contains__(self, service_type: type[Any]) -> bool:
        return service_type in self._types

    def get(self, service_type: type[T]) -> T:
        return cast(T, self._provider(service_type)())

    async def aclose(self) -> None:
        """Close the created singletons that have a ``close``, newest first; each at most once.

        One service's failure to close is logged (its type only) and does not keep the others open.
        """
        while self._created:
            service_type, close = self._created.pop()
            try:
                await close()
            except Exception as exc:
                log.warning("host.service_close_failed", service=service_type.__qualname__, error=type(exc).__name__)

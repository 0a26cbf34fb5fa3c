"""Type-keyed services over a ``dependency_injector`` container."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from dependency_injector import containers, providers

__all__ = ["ServiceProvider"]

T = TypeVar("T")


def _slot(service_type: type[Any]) -> str:
    return f"{service_type.__module__}.{service_type.__qualname__}".replace(".", "__")


class ServiceProvider:
    """Resolves services by type: ``services.get(RagRetriever)``. Singletons are created on first use."""

    def __init__(self) -> None:
        self._container = containers.DynamicContainer()
        self._types: dict[type[Any], str] = {}
        self._frozen = False

    @property
    def container(self) -> containers.DynamicContainer:
        """The underlying container, for overriding providers in tests (``override``)."""
        return self._container

    def add_singleton(self, service_type: type[T], factory: Callable[[ServiceProvider], T]) -> None:
        self._add(service_type, providers.Singleton(factory, self))

    def try_add_singleton(self, service_type: type[T], factory: Callable[[ServiceProvider], T]) -> None:
        """Register ``factory`` unless the application already registered ``service_type`` (TryAdd)."""
        if service_type not in self._types:
            self.add_singleton(service_type, factory)

    def override(self, service_type: type[T], instance: T) -> None:
        """Replace a registered service with ``instance`` (tests); ``reset_override`` undoes it."""
        self._provider(service_type).override(providers.Object(instance))

    def reset_override(self, service_type: type[T]) -> None:
        self._provider(service_type).reset_override()

    def _provider(self, service_type: type[Any]) -> providers.Provider[Any]:
        name = self._types.get(service_type)
        if name is None:
            raise LookupError(f"No service is registered for {service_type.__qualname__}.")
        provider: providers.Provider[Any] = getattr(self._container, name)
        return provider

    def add_instance(self, service_type: type[T], instance: T) -> None:
        self._add(service_type, providers.Object(instance))

    def _add(self, service_type: type[Any], provider: providers.Provider[Any]) -> None:
        if self._frozen:
            raise RuntimeError("Services cannot be added after the host is built.")
        name = _slot(service_type)
        self._types[service_type] = name
        self._container.set_provider(name, provider)

    def freeze(self) -> None:
        self._frozen = True

    def __contains__(self, service_type: type[Any]) -> bool:
        return service_type in self._types

    def get(self, service_type: type[T]) -> T:
        name = self._types.get(service_type)
        if name is None:
            raise LookupError(f"No service is registered for {service_type.__qualname__}.")
        return cast(T, getattr(self._container, name)())

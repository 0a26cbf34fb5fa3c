"""ServiceProvider: services resolve by type, singletons are shared, overrides work for tests."""

from __future__ import annotations

import pytest
from dependency_injector import providers

from runiq.hosting import HostBuilder, ServiceProvider
from runiq.hosting.services import _slot
from runiq.rag import IndexRegistry, RagIngestionManager, RagRetriever, add_runiq_rag


class Clock:
    pass


class Calendar:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


def test_services_resolve_by_type() -> None:
    """get(T) returns the service registered for T, built from its factory with the provider."""
    services = ServiceProvider()
    services.add_singleton(Clock, lambda _: Clock())
    services.add_singleton(Calendar, lambda sp: Calendar(sp.get(Clock)))
    calendar = services.get(Calendar)
    assert isinstance(calendar, Calendar)
    assert calendar.clock is services.get(Clock)
    assert Calendar in services
    assert int not in services


def test_singletons_are_created_once_and_lazily() -> None:
    """A singleton factory runs on first get() only, and every get() returns the same object."""
    created: list[Clock] = []

    def factory(_: ServiceProvider) -> Clock:
        created.append(Clock())
        return created[-1]

    services = ServiceProvider()
    services.add_singleton(Clock, factory)
    assert created == []
    first, second = services.get(Clock), services.get(Clock)
    assert first is second
    assert created == [first]


def test_instances_are_returned_as_given() -> None:
    """add_instance registers an existing object."""
    services = ServiceProvider()
    clock = Clock()
    services.add_instance(Clock, clock)
    assert services.get(Clock) is clock


def test_a_later_registration_replaces_an_earlier_one_even_after_a_get() -> None:
    """Registering a type again replaces its service, whether or not the earlier one was resolved."""
    services = ServiceProvider()
    first, second = Clock(), Clock()
    services.add_instance(Clock, first)
    assert services.get(Clock) is first
    services.add_instance(Clock, second)
    assert services.get(Clock) is second


def test_unknown_type_is_a_lookup_error() -> None:
    """Asking for an unregistered type raises LookupError naming the type."""
    with pytest.raises(LookupError, match="Clock"):
        ServiceProvider().get(Clock)


def test_two_types_with_the_same_name_do_not_collide() -> None:
    """Types are keyed by module and qualified name, so same-named classes stay apart."""

    class Clock:  # shadows the module-level Clock on purpose
        pass

    services = ServiceProvider()
    outer, inner = globals()["Clock"](), Clock()
    services.add_instance(globals()["Clock"], outer)
    services.add_instance(Clock, inner)
    assert services.get(globals()["Clock"]) is outer
    assert services.get(Clock) is inner


async def test_rag_services_resolve_as_singletons_from_the_host() -> None:
    """After add_runiq_rag the host resolves the retriever, manager and registry by type, once each."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(builder)
    async with builder.build() as host:
        for service_type in (RagRetriever, RagIngestionManager, IndexRegistry):
            assert isinstance(host.services.get(service_type), service_type)
            assert host.services.get(service_type) is host.services.get(service_type)


def test_dependency_injector_override_replaces_a_service() -> None:
    """The underlying container's providers can be overridden (and reset) without mock.patch."""
    services = ServiceProvider()
    services.add_singleton(Clock, lambda _: Clock())
    services.add_singleton(Calendar, lambda sp: Calendar(sp.get(Clock)))
    fake = Clock()
    provider = services.container.providers[_slot(Clock)]
    with provider.override(providers.Object(fake)):
        assert services.get(Clock) is fake
        assert services.get(Calendar).clock is fake  # dependants built during the override see the fake
    assert services.get(Clock) is not fake

"""Host lifecycle: explicit states, ordered participants, no restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from runiq.hosting import Host, HostBuilder, HostState, LifecycleParticipant, ServiceProvider


def test_host_states_are_the_documented_six() -> None:
    """HostState has exactly CREATED, STARTING, RUNNING, STOPPING, STOPPED and FAILED."""
    assert [s.name for s in HostState] == ["CREATED", "STARTING", "RUNNING", "STOPPING", "STOPPED", "FAILED"]


async def test_a_built_host_is_created_and_runs_nothing(
    builder: HostBuilder, journal: list[str], make_participant: Callable[..., Any]
) -> None:
    """A freshly built host is CREATED and no participant has been constructed or started."""
    constructed: list[str] = []

    def factory(_: ServiceProvider) -> Any:
        constructed.append("x")
        return make_participant("x")

    builder.add_lifecycle_participant(factory)
    host = builder.build()
    assert host.state is HostState.CREATED
    assert constructed == []
    assert journal == []


async def test_participants_start_in_order_and_stop_in_reverse(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """Participants start in registration order and stop in reverse order."""
    for name in ("a", "b", "c"):
        add_participant(name)
    host = builder.build()
    await host.start()
    assert host.state is HostState.RUNNING
    assert journal == ["start:a", "start:b", "start:c"]
    await host.stop()
    assert host.state is HostState.STOPPED
    assert journal[3:] == ["stop:c", "stop:b", "stop:a"]


async def test_states_seen_by_participants_are_starting_and_stopping(builder: HostBuilder) -> None:
    """While participants start the host is STARTING; while they stop it is STOPPING."""
    seen: list[HostState] = []
    holder: list[Host] = []

    class Observer:
        async def start(self) -> None:
            seen.append(holder[0].state)

        async def stop(self) -> None:
            seen.append(holder[0].state)

    builder.add_lifecycle_participant(lambda _: Observer())
    host = builder.build()
    holder.append(host)
    async with host:
        assert host.state is HostState.RUNNING
    assert seen == [HostState.STARTING, HostState.STOPPING]
    assert host.state is HostState.STOPPED


async def test_async_with_starts_and_stops(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """``async with builder.build() as host`` starts the host on entry and stops it on exit."""
    add_participant("a")
    async with builder.build() as host:
        assert host.state is HostState.RUNNING
        assert journal == ["start:a"]
    assert host.state is HostState.STOPPED
    assert journal == ["start:a", "stop:a"]


async def test_async_with_stops_when_the_body_raises(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """An exception in the ``async with`` body still stops every participant, then propagates."""
    add_participant("a")
    host = builder.build()
    with pytest.raises(KeyError):
        async with host:
            raise KeyError("body failed")
    assert host.state is HostState.STOPPED
    assert journal == ["start:a", "stop:a"]


async def test_failing_start_stops_started_participants_and_fails(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """A failing start stops the started participants in reverse, skips later ones, and leaves FAILED."""
    add_participant("a")
    add_participant("b")
    add_participant("broken", fail_start=True)
    add_participant("never")
    host = builder.build()
    with pytest.raises(RuntimeError, match="broken could not start"):
        await host.start()
    assert host.state is HostState.FAILED
    assert journal == ["start:a", "start:b", "start:broken", "stop:b", "stop:a"]


async def test_failing_participant_factory_fails_the_host(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """A participant factory that raises counts as a failed start: earlier participants are stopped."""
    add_participant("a")

    def broken(_: ServiceProvider) -> Any:
        raise LookupError("missing dependency")

    builder.add_lifecycle_participant(broken)
    host = builder.build()
    with pytest.raises(LookupError):
        await host.start()
    assert host.state is HostState.FAILED
    assert journal == ["start:a", "stop:a"]


async def test_failed_host_stays_failed_after_stop(builder: HostBuilder, add_participant: Callable[..., None]) -> None:
    """Stopping a FAILED host is a no-op that keeps the FAILED state (no participant is stopped twice)."""
    add_participant("broken", fail_start=True)
    host = builder.build()
    with pytest.raises(RuntimeError):
        await host.start()
    await host.stop()
    assert host.state is HostState.FAILED


async def test_a_stopping_participant_that_raises_does_not_keep_others_running(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """One participant's failing stop is contained: the others still stop and the host is STOPPED."""
    add_participant("a")
    add_participant("b", fail_stop=True)
    add_participant("c")
    host = builder.build()
    await host.start()
    await host.stop()
    assert journal[3:] == ["stop:c", "stop:b", "stop:a"]
    assert host.state is HostState.STOPPED


@pytest.mark.parametrize("after", ["stopped", "failed", "running"])
async def test_a_host_cannot_be_restarted(
    builder: HostBuilder, add_participant: Callable[..., None], after: str
) -> None:
    """start() is allowed once, from CREATED only; a running, stopped or failed host refuses it."""
    add_participant("a", fail_start=after == "failed")
    host = builder.build()
    if after == "failed":
        with pytest.raises(RuntimeError, match="could not start"):
            await host.start()
    else:
        await host.start()
        if after == "stopped":
            await host.stop()
    state = host.state
    with pytest.raises(RuntimeError, match="cannot be started"):
        await host.start()
    assert host.state is state
    await host.stop()


async def test_stopping_a_never_started_host_runs_nothing(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """stop() on a CREATED host stops nothing and leaves it STOPPED, so it can no longer start."""
    add_participant("a")
    host = builder.build()
    await host.stop()
    assert host.state is HostState.STOPPED
    assert journal == []
    with pytest.raises(RuntimeError):
        await host.start()


async def test_stop_is_idempotent(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """A second stop() does not stop participants again."""
    add_participant("a")
    host = builder.build()
    await host.start()
    await host.stop()
    await host.stop()
    assert journal == ["start:a", "stop:a"]
    assert host.state is HostState.STOPPED


def test_recording_participant_satisfies_the_protocol(make_participant: Callable[..., Any]) -> None:
    """LifecycleParticipant is a runtime-checkable protocol of async start() and stop()."""
    assert isinstance(make_participant("a"), LifecycleParticipant)
    assert not isinstance(object(), LifecycleParticipant)


class Resource:
    """A service that holds something to close; records its closing in the journal."""

    def __init__(self, name: str, journal: list[str], *, fail_close: bool = False) -> None:
        self.name, self.journal, self.fail_close = name, journal, fail_close

    async def aclose(self) -> None:
        self.journal.append(f"close:{self.name}")
        if self.fail_close:
            raise RuntimeError(f"{self.name} could not close")


class Pool(Resource):
    pass


class Client(Resource):
    pass


class Unused(Resource):
    pass


def _add_resources(builder: HostBuilder, journal: list[str], *, fail_pool: bool = False) -> None:
    builder.services.add_singleton(Pool, lambda _: Pool("pool", journal, fail_close=fail_pool), close=Pool.aclose)
    builder.services.add_singleton(Client, lambda sp: (sp.get(Pool), Client("client", journal))[1], close=Client.aclose)
    builder.services.add_singleton(Unused, lambda _: Unused("unused", journal), close=Unused.aclose)


async def test_stopping_closes_the_created_services_after_the_participants_newest_first(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """A service closes before the services it was built from; one never created is never closed."""
    _add_resources(builder, journal)
    add_participant("a")
    async with builder.build() as host:
        host.services.get(Client)  # creates Pool, then Client
    assert journal == ["start:a", "stop:a", "close:client", "close:pool"]


async def test_stopping_a_never_started_host_closes_the_services_it_used(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    """The command line uses services without starting the host; stopping it closes them (once)."""
    _add_resources(builder, journal)
    add_participant("a")
    host = builder.build()
    host.services.get(Client)
    await host.stop()
    await host.stop()
    assert host.state is HostState.STOPPED
    assert journal == ["close:client", "close:pool"]


async def test_a_service_that_fails_to_close_does_not_keep_others_open(
    builder: HostBuilder, journal: list[str]
) -> None:
    _add_resources(builder, journal, fail_pool=True)
    host = builder.build()
    host.services.get(Client)
    host.services.get(Pool)
    await host.stop()
    assert journal == ["close:client", "close:pool"]
    assert host.state is HostState.STOPPED


async def test_a_failed_start_closes_the_services_too(
    builder: HostBuilder, journal: list[str], add_participant: Callable[..., None]
) -> None:
    _add_resources(builder, journal)

    class UsesClient:
        async def start(self) -> None:
            raise RuntimeError("could not start")

        async def stop(self) -> None:
            journal.append("stop:uses-client")

    builder.add_lifecycle_participant(lambda services: (services.get(Client), UsesClient())[1])
    host = builder.build()
    with pytest.raises(RuntimeError, match="could not start"):
        await host.start()
    assert host.state is HostState.FAILED
    assert journal == ["close:client", "close:pool"]


async def test_instances_and_overrides_belong_to_the_caller(builder: HostBuilder, journal: list[str]) -> None:
    """Only singletons the host created are closed: not an added instance, not a test's override."""
    _add_resources(builder, journal)
    builder.services.add_instance(Resource, Resource("given", journal))
    builder.services.override(Pool, Pool("override", journal))
    host = builder.build()
    host.services.get(Client)
    host.services.get(Resource)
    await host.stop()
    assert journal == ["close:client"]

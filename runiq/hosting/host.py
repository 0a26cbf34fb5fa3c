"""The host: services plus a lifecycle that participants (ingestion strategies, a dashboard) join.

Stopping a host stops its started participants (newest first), then closes the services it created
(:meth:`ServiceProvider.aclose`). A host that was never started can be stopped too: a command-line
tool uses services without running participants, and stopping closes what it opened.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from types import TracebackType
from typing import Protocol, runtime_checkable

from runiq.hosting.services import ServiceProvider
from runiq.logging import get_logger

__all__ = ["Host", "HostState", "LifecycleParticipant", "ServiceProvider"]

log = get_logger(__name__)


class HostState(StrEnum):
    CREATED = "created"  # built; no participant exists yet (services may be in use without starting)
    STARTING = "starting"  # participants are starting in registration order
    RUNNING = "running"  # every participant started; services are usable
    STOPPING = "stopping"  # participants are stopping in reverse order
    STOPPED = "stopped"  # participants stopped, services closed; a host cannot be restarted
    FAILED = "failed"  # start failed; started participants were stopped again and services closed


@runtime_checkable
class LifecycleParticipant(Protocol):
    """Joins the host lifecycle. ``start`` may block (OnStartup ingestion does); ``stop`` must not raise."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


ParticipantFactory = Callable[[ServiceProvider], LifecycleParticipant]


class Host:
    """``async with builder.build() as host`` starts it and stops it on exit."""

    def __init__(self, services: ServiceProvider, participants: list[ParticipantFactory]) -> None:
        self.services = services
        self._factories = participants
        self._started: list[LifecycleParticipant] = []
        self.state = HostState.CREATED

    async def start(self) -> None:
        if self.state is not HostState.CREATED:
            raise RuntimeError(f"A host in state '{self.state.value}' cannot be started; build a new one.")
        self.state = HostState.STARTING
        try:
            for factory in self._factories:
                participant = factory(self.services)
                await participant.start()
                self._started.append(participant)
        except BaseException:
            await self._stop_started()
            await self.services.aclose()
            self.state = HostState.FAILED
            raise
        self.state = HostState.RUNNING
        log.info("host.started", participants=len(self._started))

    async def stop(self) -> None:
        """Stop the started participants, then close the created services. Idempotent; a host that was
        never started only closes its services (and can no longer be started)."""
        if self.state in (HostState.STOPPED, HostState.FAILED):
            return
        started = self.state is not HostState.CREATED
        self.state = HostState.STOPPING
        await self._stop_started()
        await self.services.aclose()
        self.state = HostState.STOPPED
        if started:
            log.info("host.stopped")

    async def _stop_started(self) -> None:
        while self._started:
            participant = self._started.pop()
            try:
                await participant.stop()
            except Exception as exc:  # one participant's failure must not keep the others running
                log.warning(
                    "host.participant_stop_failed", participant=type(participant).__name__, error=type(exc).__name__
                )

    async def __aenter__(self) -> Host:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

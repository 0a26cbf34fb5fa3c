"""The host: services plus a lifecycle that participants (ingestion strategies, a dashboard) join."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from types import TracebackType
from typing import Protocol, runtime_checkable

import structlog

from runiq.hosting.services import ServiceProvider

__all__ = ["Host", "HostState", "LifecycleParticipant", "ServiceProvider"]

log = structlog.get_logger(__name__)


class HostState(StrEnum):
    CREATED = "created"  # built; nothing has run, no participant exists yet
    STARTING = "starting"  # participants are starting in registration order
    RUNNING = "running"  # every participant started; services are usable
    STOPPING = "stopping"  # participants are stopping in reverse order
    STOPPED = "stopped"  # stopped cleanly; a host cannot be restarted
    FAILED = "failed"  # start failed; started participants were stopped again


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
            self.state = HostState.FAILED
            raise
        self.state = HostState.RUNNING
        log.info("host.started", participants=len(self._started))

    async def stop(self) -> None:
        if self.state in (HostState.STOPPED, HostState.FAILED, HostState.CREATED):
            self.state = HostState.STOPPED if self.state is HostState.CREATED else self.state
            return
        self.state = HostState.STOPPING
        await self._stop_started()
        self.state = HostState.STOPPED
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

"""A lightweight per-process cron scheduler (five fields, ``croniter``).

Per process by default: no distributed locking or leader election. A tick that finds the index
already ingesting is skipped (the manager reports a conflict), not queued. An index registered with
``scheduled(cron, coordinate=True)`` on a store that implements :class:`IngestionCoordinator`
(PostgreSQL: advisory locks) runs each scheduled ingestion in one instance only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from runiq.logging import get_logger
from runiq.rag._errors import IngestionConflictError
from runiq.rag._ingestion.manager import RagIngestionManager
from runiq.rag._ingestion.operation import RagIngestionReason
from runiq.rag._registration.definitions import IndexDefinition
from runiq.rag._runtime import IndexRuntime
from runiq.rag._stores.base import IngestionCoordinator

__all__ = ["CronScheduler", "next_fire_time"]

log = get_logger(__name__)


def _local_now() -> datetime:
    return datetime.now().astimezone()


def next_fire_time(schedule: str, after: datetime, time_zone: str | None) -> datetime:
    """The next time strictly after ``after`` that matches ``schedule`` in the given (or local) zone."""
    from croniter import croniter  # imported when the strategy's schedule was validated (build time)

    if time_zone:
        nxt: datetime = croniter(schedule, after.astimezone(ZoneInfo(time_zone))).get_next(datetime)
        return nxt
    # The local zone with its DST rules: iterate over naive local wall time, then attach the offset in force.
    local: datetime = croniter(schedule, after.astimezone().replace(tzinfo=None)).get_next(datetime)
    return local.astimezone()


class CronScheduler:
    def __init__(
        self,
        manager: RagIngestionManager,
        indexes: list[IndexDefinition],
        *,
        clock: Callable[[], datetime] = _local_now,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        runtime: IndexRuntime | None = None,
    ) -> None:
        self._manager = manager
        self._runtime = runtime
        self._leased: set[asyncio.Task[None]] = set()
        self._indexes = indexes
        self._clock = clock
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._indexes and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="runiq-cron-scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            for task in list(self._leased):
                task.cancel()
            await asyncio.gather(*self._leased, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        now = self._clock()
        due = {d.name: self._next(d, now) for d in self._indexes}
        while True:
            name = min(due, key=lambda n: due[n])
            delay = (due[name] - self._clock()).total_seconds()
            if delay > 0:
                await self._sleep(delay)
            try:
                await self._fire(name)
            except Exception as exc:  # one failed tick (e.g. the store is down) must not end the schedule
                log.warning("ingestion.schedule_failed", index=name, error=type(exc).__name__)
            definition = next(d for d in self._indexes if d.name == name)
            due[name] = self._next(definition, due[name])

    @staticmethod
    def _next(definition: IndexDefinition, after: datetime) -> datetime:
        strategy = definition.ingestion
        assert strategy.schedule is not None
        return next_fire_time(strategy.schedule, after, strategy.time_zone)

    async def _fire(self, name: str) -> None:
        definition = next(d for d in self._indexes if d.name == name)
        if definition.ingestion.coordinate and self._runtime is not None:
            store = (await self._runtime.get(name)).store
            if isinstance(store, IngestionCoordinator):
                # The lease is held for the whole run, so the tick must not block the loop.
                task = asyncio.create_task(self._leased_run(store, name))
                self._leased.add(task)
                task.add_done_callback(self._leased.discard)
                return
            log.warning("ingestion.coordination_unsupported", index=name, store=store.store_kind)
        try:
            await self._manager.start(name, RagIngestionReason.SCHEDULED)
        except IngestionConflictError:
            log.debug("ingestion.schedule_skipped", index=name, reason="active_operation")

    async def _leased_run(self, coordinator: IngestionCoordinator, name: str) -> None:
        async with coordinator.ingestion_lease(name) as acquired:
            if not acquired:
                log.info("ingestion.schedule_skipped", index=name, reason="another_instance")
                return
            try:
                await self._manager.start(name, RagIngestionReason.SCHEDULED)
            except IngestionConflictError:
                log.debug("ingestion.schedule_skipped", index=name, reason="active_operation")
                return
            await self._manager.wait(name)

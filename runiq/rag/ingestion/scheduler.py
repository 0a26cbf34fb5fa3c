"""A lightweight per-process cron scheduler (five fields, ``croniter``).

Per process by design: no distributed locking or leader election. A tick that finds the index
already ingesting is skipped (the manager reports a conflict), not queued.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from zoneinfo import ZoneInfo

import structlog
from croniter import croniter

from runiq.rag.errors import IngestionConflictError
from runiq.rag.ingestion.manager import RagIngestionManager
from runiq.rag.ingestion.operation import RagIngestionReason
from runiq.rag.registration.definitions import IndexDefinition

__all__ = ["CronScheduler", "next_fire_time"]

log = structlog.get_logger(__name__)


def _local_now() -> datetime:
    return datetime.now().astimezone()


def next_fire_time(schedule: str, after: datetime, time_zone: str | None) -> datetime:
    """The next time strictly after ``after`` that matches ``schedule`` in the given (or local) zone."""
    zone = ZoneInfo(time_zone) if time_zone else after.astimezone().tzinfo
    start = after.astimezone(zone)
    nxt: datetime = croniter(schedule, start).get_next(datetime)
    return nxt


class CronScheduler:
    def __init__(
        self,
        manager: RagIngestionManager,
        indexes: list[IndexDefinition],
        *,
        clock: Callable[[], datetime] = _local_now,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._manager = manager
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
            self._task = None

    async def _loop(self) -> None:
        now = self._clock()
        due = {d.name: self._next(d, now) for d in self._indexes}
        while True:
            name = min(due, key=lambda n: due[n])
            delay = (due[name] - self._clock()).total_seconds()
            if delay > 0:
                await self._sleep(delay)
            await self._fire(name)
            definition = next(d for d in self._indexes if d.name == name)
            due[name] = self._next(definition, due[name])

    @staticmethod
    def _next(definition: IndexDefinition, after: datetime) -> datetime:
        strategy = definition.ingestion
        assert strategy.schedule is not None
        return next_fire_time(strategy.schedule, after, strategy.time_zone)

    async def _fire(self, name: str) -> None:
        try:
            await self._manager.start(name, RagIngestionReason.SCHEDULED)
        except IngestionConflictError:
            log.debug("ingestion.schedule_skipped", index=name, reason="active_operation")

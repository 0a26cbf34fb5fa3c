"""CronScheduler with an injected clock and sleep: firing times, time zones, conflicts and stop."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from runiq.errors import VectorStoreUnavailableError
from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    IndexRuntime,
    IngestionStrategyKind,
    RagIngestionManager,
    RagIngestionReason,
    RagIngestionState,
    add_runiq_rag,
)
from runiq.rag._ingestion.scheduler import CronScheduler, next_fire_time
from runiq.rag._ingestion.strategies import IngestionStrategy
from runiq.rag._registration.definitions import IndexRegistry
from runiq.rag.providers import InMemoryVectorStore, hookimpl


class FakeTime:
    """A clock that only moves when the scheduler sleeps. After ``limit`` sleeps, sleep parks forever."""

    def __init__(self, start: datetime, limit: int) -> None:
        self.now = start
        self.limit = limit
        self.sleeps: list[float] = []
        self.parked = asyncio.Event()

    def clock(self) -> datetime:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if len(self.sleeps) >= self.limit:
            self.parked.set()
            await asyncio.Event().wait()
        self.now += timedelta(seconds=seconds)
        await asyncio.sleep(0)


@pytest.fixture
async def host(index_host: Callable[..., Host], source: Any, gated_embedder_type: Any) -> AsyncIterator[Host]:
    """A started host with one manual index; the tests drive their own scheduler over it."""
    source.set(a="Alpha text.", b="Bravo text.")
    embedder = gated_embedder_type(16)
    embedder.release.set()
    built = index_host(
        lambda index: index.add_source(source).use_embedding("gated").use_in_memory_vector_store(),
        embeddings={"gated": embedder},
    )
    built.embedder = embedder  # type: ignore[attr-defined]
    async with built:
        yield built


def _scheduled(host: Host, schedule: str, time_zone: str | None = None) -> list[Any]:
    definition = host.services.get(IndexRegistry).get("docs")
    strategy = IngestionStrategy(kind=IngestionStrategyKind.SCHEDULED, schedule=schedule, time_zone=time_zone)
    return [dataclasses.replace(definition, ingestion=strategy)]


async def _run_until_parked(host: Host, fake: FakeTime, schedule: str, time_zone: str | None = None) -> CronScheduler:
    scheduler = CronScheduler(
        host.services.get(RagIngestionManager),
        _scheduled(host, schedule, time_zone),
        clock=fake.clock,
        sleep=fake.sleep,
    )
    scheduler.start()
    await asyncio.wait_for(fake.parked.wait(), 2)
    return scheduler


async def test_scheduler_fires_at_cron_times(host: Host) -> None:
    """'*/5 * * * *' from 10:02:30 sleeps 150 s, fires a SCHEDULED run, then sleeps 300 s to the next slot."""
    fake = FakeTime(datetime(2026, 3, 2, 10, 2, 30, tzinfo=UTC), limit=2)
    scheduler = await _run_until_parked(host, fake, "*/5 * * * *", "UTC")
    try:
        assert fake.sleeps == [150.0, 300.0]
        manager = host.services.get(RagIngestionManager)
        operation = await asyncio.wait_for(manager.wait("docs"), 2)
        assert operation.reason is RagIngestionReason.SCHEDULED
        assert operation.state is RagIngestionState.COMPLETED
    finally:
        await scheduler.stop()


async def test_scheduler_fires_repeatedly(host: Host) -> None:
    """Each due slot fires once: three hourly slots give three scheduled runs at 3600 s intervals."""
    fake = FakeTime(datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC), limit=4)
    manager = host.services.get(RagIngestionManager)
    seen: list[str] = []
    original_start = manager.start

    async def recording_start(name: str, reason: RagIngestionReason = RagIngestionReason.MANUAL) -> Any:
        operation = await original_start(name, reason)
        seen.append(reason.value)
        await manager.wait(name)
        return operation

    manager.start = recording_start  # type: ignore[method-assign]
    scheduler = await _run_until_parked(host, fake, "0 * * * *", "UTC")
    try:
        assert fake.sleeps == [3600.0, 3600.0, 3600.0, 3600.0]
        assert seen == ["scheduled"] * 3
    finally:
        await scheduler.stop()


async def test_tick_during_an_active_run_is_skipped(host: Host) -> None:
    """A scheduled tick while a manual run is active is skipped (no second run, no crash) and the loop goes on."""
    embedder = host.embedder  # type: ignore[attr-defined]
    embedder.release.clear()
    manager = host.services.get(RagIngestionManager)
    manual = await manager.start("docs")
    await asyncio.wait_for(embedder.reached.wait(), 2)
    fake = FakeTime(datetime(2026, 3, 2, 10, 4, 0, tzinfo=UTC), limit=2)
    scheduler = await _run_until_parked(host, fake, "*/5 * * * *", "UTC")
    try:
        assert fake.sleeps == [60.0, 300.0]  # it fired (and was refused) and scheduled the next slot
        embedder.release.set()
        finished = await asyncio.wait_for(manager.wait("docs"), 2)
        assert finished.operation_id == manual.operation_id
        assert finished.reason is RagIngestionReason.MANUAL
        assert manager.status("docs").active_operation is None
    finally:
        await scheduler.stop()


async def test_stop_cancels_the_loop_promptly(host: Host) -> None:
    """stop() ends a scheduler that is sleeping, and starts nothing afterwards."""
    fake = FakeTime(datetime(2026, 3, 2, 10, 0, 1, tzinfo=UTC), limit=1)
    scheduler = await _run_until_parked(host, fake, "0 0 1 1 *", "UTC")
    await asyncio.wait_for(scheduler.stop(), 1)
    assert host.services.get(RagIngestionManager).status("docs").last_operation is None


@pytest.mark.parametrize(
    ("start", "zone", "delay"),
    [
        (datetime(2026, 1, 15, 12, 0, tzinfo=UTC), "America/New_York", 2 * 3600),  # 07:00 EST -> 09:00 EST
        (datetime(2026, 1, 15, 7, 0, tzinfo=UTC), "Europe/Berlin", 3600),  # 08:00 CET -> 09:00 CET
        (datetime(2026, 7, 15, 6, 0, tzinfo=UTC), "Europe/Berlin", 3600),  # 08:00 CEST -> 09:00 CEST
        (datetime(2026, 1, 15, 7, 0, tzinfo=UTC), "UTC", 2 * 3600),
    ],
)
async def test_schedule_is_evaluated_in_the_given_time_zone(host: Host, start: datetime, zone: str, delay: int) -> None:
    """'0 9 * * *' means 09:00 in the configured zone, including daylight saving time."""
    fake = FakeTime(start, limit=1)
    scheduler = await _run_until_parked(host, fake, "0 9 * * *", zone)
    try:
        assert fake.sleeps == [float(delay)]
    finally:
        await scheduler.stop()


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """``local_zone("Asia/Kolkata")`` makes that the process's local time zone for one test."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield set_zone
    monkeypatch.undo()
    time.tzset()


async def test_no_time_zone_means_the_process_local_zone(host: Host, local_zone: Callable[[str], None]) -> None:
    """Without a time zone the schedule uses the runtime's local zone (here UTC+05:30)."""
    local_zone("Asia/Kolkata")
    fake = FakeTime(datetime(2026, 1, 15, 2, 30, tzinfo=UTC), limit=1)  # 08:00 in Kolkata
    scheduler = await _run_until_parked(host, fake, "0 9 * * *")
    try:
        assert fake.sleeps == [3600.0]
    finally:
        await scheduler.stop()


async def test_local_zone_schedule_follows_daylight_saving(host: Host, local_zone: Callable[[str], None]) -> None:
    """'0 9 * * *' with the local zone (Europe/Berlin) stays at 09:00 local across the March DST change:
    09:00 CET on the 28th, then 09:00 CEST on the 29th, 23 hours later."""
    local_zone("Europe/Berlin")
    fake = FakeTime(datetime(2026, 3, 28, 7, 30, tzinfo=UTC), limit=2)  # 08:30 CET
    scheduler = await _run_until_parked(host, fake, "0 9 * * *")
    try:
        assert fake.sleeps == [1800.0, 23 * 3600.0]
    finally:
        await scheduler.stop()
    before_switch = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # 01:30 CET, DST starts at 02:00
    assert next_fire_time("0 9 * * *", before_switch, None) == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)


async def test_a_failing_tick_does_not_stop_the_scheduler(make_host: Callable[..., Host], source: Any) -> None:
    """If one scheduled tick fails (the coordinated store cannot be opened: database down), later ticks still
    fire: the loop survives and sleeps until the next slot."""
    attempts: list[int] = []

    class FlakyStorePlugin:
        @hookimpl
        def runiq_register_providers(self, registry: Any) -> None:
            @asynccontextmanager
            async def factory(options: Any) -> AsyncIterator[InMemoryVectorStore]:
                attempts.append(1)
                if len(attempts) == 1:
                    raise VectorStoreUnavailableError("flaky-db")
                yield InMemoryVectorStore()

            registry.add_vector_store("flaky", factory)

    source.set(a="Alpha text.")
    builder = HostBuilder(load_entry_points=False, plugins=[FlakyStorePlugin()])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: index.add_source(source).use_embedding("hashing", dimensions=16).use_vector_store("flaky"),
        ),
    )
    async with builder.build() as host:
        definition = host.services.get(IndexRegistry).get("docs")
        strategy = IngestionStrategy(
            kind=IngestionStrategyKind.SCHEDULED, schedule="*/5 * * * *", time_zone="UTC", coordinate=True
        )
        fake = FakeTime(datetime(2026, 3, 2, 10, 4, 0, tzinfo=UTC), limit=3)
        scheduler = CronScheduler(
            host.services.get(RagIngestionManager),
            [dataclasses.replace(definition, ingestion=strategy)],
            clock=fake.clock,
            sleep=fake.sleep,
            runtime=host.services.get(IndexRuntime),
        )
        scheduler.start()
        try:
            await asyncio.wait_for(fake.parked.wait(), 2)
            assert fake.sleeps == [60.0, 300.0, 300.0]
        finally:
            await scheduler.stop()
        assert len(attempts) >= 2  # the second tick opened the store again


def test_next_fire_time_is_strictly_after() -> None:
    """A time exactly on a slot gives the following slot."""
    at = datetime(2026, 3, 2, 10, 5, tzinfo=UTC)
    assert next_fire_time("*/5 * * * *", at, "UTC") == datetime(2026, 3, 2, 10, 10, tzinfo=UTC)


def test_day_of_week_seven_is_sunday() -> None:
    """Weekday 7 means Sunday (the .NET quirk where 7 never matches is not reproduced)."""
    saturday = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
    assert saturday.weekday() == 5
    fired = next_fire_time("0 9 * * 7", saturday, "UTC")
    assert fired == datetime(2026, 3, 8, 9, 0, tzinfo=UTC)
    assert next_fire_time("0 9 * * 0", saturday, "UTC") == fired

"""Ingestion strategies: what registration and host start trigger, and what host stop cancels."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runiq.hosting import Host, HostState
from runiq.rag import (
    IngestionStrategyKind,
    RagConfigurationError,
    RagIndexReadiness,
    RagIngestionManager,
    RagIngestionReason,
    RagIngestionState,
    StartupIngestionError,
)
from runiq.rag._ingestion.strategies import IngestionBuilder, IngestionStrategy, normalise_schedule
from runiq.rag.providers import InMemoryVectorStore
from runiq.rag.testing import FailingEmbedder

R, S = RagIndexReadiness, RagIngestionState
NEVER_SOON = "0 0 29 2 *"  # midnight on February 29th: never due while a test runs


def _index(
    source: Any, strategy: Callable[[IngestionBuilder], object], embedder: str = "gated", store: str | None = None
):
    def configure(index: Any) -> object:
        index.add_source(source).use_embedding(embedder).configure_ingestion(strategy)
        return index.use_vector_store(store) if store else index.use_in_memory_vector_store()

    return configure


@pytest.fixture
def gated(gated_embedder_type: Any) -> Any:
    return gated_embedder_type(32)


async def test_registration_and_build_start_nothing(
    index_host: Callable[..., Host], tmp_path: Path, source: Any
) -> None:
    """Registering and building a host with OnStartup, background and scheduled indexes reads no source."""
    host = index_host(
        lambda index: (
            index.add_source(source)
            .use_directory(tmp_path / "missing", "*.md")
            .use_embedding("hashing", dimensions=16)
            .use_in_memory_vector_store()
            .configure_ingestion(lambda ingestion: ingestion.on_startup())
        )
    )
    assert host.state is HostState.CREATED
    assert source.reads == 0
    assert host.services.get(RagIngestionManager).status("docs").readiness is R.NOT_INITIALIZED
    await host.stop()


@pytest.mark.parametrize(
    "strategy",
    [
        pytest.param(lambda ingestion: ingestion.manual(), id="manual"),
        pytest.param(lambda ingestion: None, id="default"),
        pytest.param(lambda ingestion: ingestion.scheduled(NEVER_SOON), id="scheduled"),
    ],
)
async def test_manual_default_and_scheduled_indexes_do_not_ingest_on_start(
    index_host: Callable[..., Host], source: Any, strategy: Callable[[IngestionBuilder], object]
) -> None:
    """Starting the host runs nothing for manual (the default) and not-yet-due scheduled indexes."""
    source.set(a="Alpha.")
    async with index_host(_index(source, strategy, "hashing-16"), embeddings={"hashing-16": _hashing()}) as host:
        await asyncio.sleep(0.01)
        status = host.services.get(RagIngestionManager).status("docs")
        assert status.readiness is R.NOT_INITIALIZED and status.last_operation is None
        assert status.active_operation is None
        assert source.reads == 0


def _hashing() -> Any:
    from runiq.rag.providers import HashingEmbedder

    return HashingEmbedder(16)


@pytest.mark.parametrize(
    "strategy",
    [
        pytest.param(lambda ingestion: ingestion.on_startup(), id="on-startup"),
        pytest.param(lambda ingestion: ingestion.background_on_startup(), id="background"),
        pytest.param(lambda ingestion: ingestion.scheduled(NEVER_SOON), id="scheduled"),
    ],
)
async def test_every_index_accepts_a_manual_run(
    index_host: Callable[..., Host], source: Any, strategy: Callable[[IngestionBuilder], object]
) -> None:
    """Whatever the strategy, an explicit manual run works once nothing else is active."""
    source.set(a="Alpha.")
    async with index_host(_index(source, strategy, "hashing-16"), embeddings={"hashing-16": _hashing()}) as host:
        manager = host.services.get(RagIngestionManager)
        if manager.status("docs").active_operation is not None:
            await manager.wait("docs")
        operation = await manager.run("docs")
        assert operation.state is S.COMPLETED and operation.reason is RagIngestionReason.MANUAL


async def test_on_startup_blocks_host_start_until_ingested(
    index_host: Callable[..., Host], source: Any, gated: Any
) -> None:
    """Host.start() does not return until the OnStartup ingestion has completed; then the index is READY."""
    source.set(a="Alpha.", b="Bravo.")
    host = index_host(_index(source, lambda i: i.on_startup()), embeddings={"gated": gated})
    starting = asyncio.create_task(host.start())
    await asyncio.wait_for(gated.reached.wait(), 2)
    await asyncio.sleep(0.02)
    assert not starting.done()
    assert host.state is HostState.STARTING
    gated.release.set()
    await asyncio.wait_for(starting, 2)
    try:
        assert host.state is HostState.RUNNING
        status = host.services.get(RagIngestionManager).status("docs")
        assert status.readiness is R.READY
        assert status.last_operation is not None and status.last_operation.reason is RagIngestionReason.STARTUP
        assert status.last_operation.state is S.COMPLETED
    finally:
        await host.stop()


@pytest.mark.parametrize(
    ("fail_on", "state"), [("", "failed"), ("BROKEN", "partially_completed")], ids=["all-fail", "some-fail"]
)
async def test_on_startup_failure_fails_host_start(
    index_host: Callable[..., Host], source: Any, fail_on: str, state: str
) -> None:
    """An OnStartup ingestion that does not complete fails Host.start() with StartupIngestionError."""
    source.set(a="Alpha.", b="BROKEN bravo.")
    host = index_host(
        _index(source, lambda i: i.on_startup(), "failing"),
        embeddings={"failing": FailingEmbedder(32, fail_on=fail_on or None)},
    )
    with pytest.raises(StartupIngestionError) as raised:
        async with host:
            pytest.fail("the host must not start")
    assert raised.value.index_name == "docs" and raised.value.state == state
    assert host.state is HostState.FAILED


async def test_background_on_startup_does_not_block(index_host: Callable[..., Host], source: Any, gated: Any) -> None:
    """Host.start() returns while the background run is still working (INITIALIZING), which then completes."""
    source.set(a="Alpha.")
    host = index_host(_index(source, lambda i: i.background_on_startup()), embeddings={"gated": gated})
    await asyncio.wait_for(host.start(), 2)  # would time out if start waited for the gated ingestion
    try:
        manager = host.services.get(RagIngestionManager)
        await asyncio.wait_for(gated.reached.wait(), 2)
        status = manager.status("docs")
        assert status.readiness is R.INITIALIZING
        assert status.active_operation is not None
        assert status.active_operation.reason is RagIngestionReason.BACKGROUND_STARTUP
        gated.release.set()
        finished = await asyncio.wait_for(manager.wait("docs"), 2)
        assert finished.state is S.COMPLETED
        assert manager.status("docs").readiness is R.READY
    finally:
        gated.release.set()
        await host.stop()


async def test_background_failure_is_contained(index_host: Callable[..., Host], source: Any) -> None:
    """A failing background run does not fail the host; the index reports FAILED."""
    source.set(a="Alpha.")
    host = index_host(
        _index(source, lambda i: i.background_on_startup(), "failing"), embeddings={"failing": FailingEmbedder(32)}
    )
    async with host:
        assert host.state is HostState.RUNNING
        manager = host.services.get(RagIngestionManager)
        assert (await asyncio.wait_for(manager.wait("docs"), 2)).state is S.FAILED
        assert manager.status("docs").readiness is R.FAILED


async def test_host_stop_cancels_a_running_background_ingestion(
    index_host: Callable[..., Host], source: Any, gated: Any
) -> None:
    """Stopping the host cancels the background run promptly: CANCELLED, nothing half-written."""
    source.set(a="Alpha.", b="Bravo.")
    store = InMemoryVectorStore()
    host = index_host(
        _index(source, lambda i: i.background_on_startup(), store="shared"),
        embeddings={"gated": gated},
        stores={"shared": store},
    )
    await host.start()
    await asyncio.wait_for(gated.reached.wait(), 2)
    await asyncio.wait_for(host.stop(), 2)
    assert host.state is HostState.STOPPED
    status = host.services.get(RagIngestionManager).status("docs")
    assert status.active_operation is None
    assert status.last_operation is not None and status.last_operation.state is S.CANCELLED
    assert status.readiness is R.NOT_INITIALIZED
    assert await store.count("docs") == 0


async def test_manager_refuses_starts_after_host_stop(index_host: Callable[..., Host], source: Any) -> None:
    """After the host stopped, the manager starts no new run."""
    source.set(a="Alpha.")
    host = index_host(_index(source, lambda i: i.manual(), "hashing-16"), embeddings={"hashing-16": _hashing()})
    async with host:
        pass
    with pytest.raises(RuntimeError):
        await host.services.get(RagIngestionManager).start("docs")


# -- strategy values -------------------------------------------------------------------------


def test_default_strategy_is_manual() -> None:
    """An index without configure_ingestion is MANUAL."""
    assert IngestionBuilder().build() == IngestionStrategy(kind=IngestionStrategyKind.MANUAL)


def test_only_one_strategy_selection() -> None:
    """Selecting a second strategy on the same builder is a RagConfigurationError."""
    builder = IngestionBuilder().on_startup()
    with pytest.raises(RagConfigurationError):
        builder.manual()


@pytest.mark.parametrize(
    "expression",
    [
        "",
        "not a schedule",
        "* * *",
        "* * * * * *",
        "*/0 * * * *",
        "10-5 * * * *",
        "1-2-3 * * * *",
        "1//2 * * * *",
        "60 * * * *",
        "* 24 * * *",
        "0 0 32 * *",
        "0 0 * 13 *",
        "0 0 * * MON",
        "@daily",
    ],
)
def test_invalid_cron_expressions_are_rejected(expression: str) -> None:
    """Schedules must be five numeric fields within range with '*', ',', '-' and '/' only."""
    with pytest.raises(RagConfigurationError):
        normalise_schedule(expression)


def test_cron_whitespace_is_normalised() -> None:
    """Whitespace between fields collapses to single spaces."""
    assert normalise_schedule(" 0  2 * * * ") == "0 2 * * *"
    assert IngestionBuilder().scheduled("*/15\t9-17 * * 1-5").build().schedule == "*/15 9-17 * * 1-5"


def test_schedule_and_time_zone_belong_to_scheduled_only() -> None:
    """A schedule or time zone on another kind, a missing schedule, or an unknown zone are rejected."""
    with pytest.raises(RagConfigurationError):
        IngestionStrategy(kind=IngestionStrategyKind.MANUAL, schedule="* * * * *")
    with pytest.raises(RagConfigurationError):
        IngestionStrategy(kind=IngestionStrategyKind.ON_STARTUP, time_zone="UTC")
    with pytest.raises(RagConfigurationError):
        IngestionStrategy(kind=IngestionStrategyKind.SCHEDULED)
    with pytest.raises(RagConfigurationError):
        IngestionBuilder().scheduled("* * * * *", time_zone="Mars/Olympus_Mons")
    assert IngestionBuilder().scheduled("* * * * *", time_zone="Europe/Berlin").build().time_zone == "Europe/Berlin"

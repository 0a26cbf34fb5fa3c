"""Registration does no I/O: no file is scanned, no provider is opened, no task is created.

The proof uses a directory that does not exist and a vector store whose factory raises: building
the host, and even starting it (Manual strategy), touches neither. The failure appears only when
the index is used.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from runiq.errors import VectorStoreUnavailableError
from runiq.hosting import HostBuilder, HostState
from runiq.plugins import ProviderRegistry, hookimpl
from runiq.rag import (
    HashingEmbedding,
    RagDocument,
    RagIndexReadiness,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    StartupIngestionError,
    add_runiq_rag,
)
from runiq.rag._sources import InMemorySource
from runiq.rag.providers import SourceItem


class StoreFactoryCalled(RuntimeError):
    """What the exploding store's factory raises when (and only when) someone finally opens it."""


class ExplodingStorePlugin:
    """A plugin object contributing the vector store 'exploding', whose factory raises and counts calls."""

    __name__ = "exploding-store-plugin"

    def __init__(self) -> None:
        self.factory_calls = 0

    def _factory(self, options: Any) -> Any:
        self.factory_calls += 1
        raise StoreFactoryCalled("the store was opened")

    @hookimpl
    def runiq_register_providers(self, registry: ProviderRegistry) -> None:
        registry.add_vector_store("exploding", self._factory)


class CountingSource(InMemorySource):
    """An in-memory source that counts reads."""

    reads = 0

    async def stream(self) -> AsyncIterator[SourceItem]:
        type(self).reads += 1
        async for item in super().stream():
            yield item


def _untouched(path: Path) -> bool:
    """Nothing created the directory (a scan that "helpfully" made it would show here)."""
    return not path.exists()


@pytest.fixture
def plugin() -> ExplodingStorePlugin:
    return ExplodingStorePlugin()


@pytest.fixture
def missing_dir(tmp_path: Path) -> Path:
    path = tmp_path / "does-not-exist"
    assert not path.exists()
    return path


def _builder(plugin: ExplodingStorePlugin, missing_dir: Path, strategy: str = "manual") -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(missing_dir, "*.md", recursive=True)
                .use_embedding(HashingEmbedding(dimensions=32))
                .use_vector_store("exploding")
                .configure_ingestion(lambda ingestion: getattr(ingestion, strategy)())
            ),
        ),
    )
    return builder


def test_the_plugin_object_is_a_registered_plugin(plugin: ExplodingStorePlugin, missing_dir: Path) -> None:
    """The fake plugin object goes through the real hook: its store is attributed to it."""
    from runiq.plugins import ProviderKind

    builder = _builder(plugin, missing_dir)
    assert builder.providers.get(ProviderKind.VECTOR_STORE, "exploding").plugin == "exploding-store-plugin"


async def test_registration_and_build_touch_neither_directory_nor_store(
    plugin: ExplodingStorePlugin, missing_dir: Path
) -> None:
    """add_index and build() succeed with a missing directory and a store whose factory would raise."""
    tasks_before = asyncio.all_tasks()
    host = _builder(plugin, missing_dir).build()
    assert host.state is HostState.CREATED
    assert plugin.factory_calls == 0
    assert _untouched(missing_dir)
    assert asyncio.all_tasks() == tasks_before


async def test_starting_a_manual_host_touches_neither(plugin: ExplodingStorePlugin, missing_dir: Path) -> None:
    """A Manual-strategy host starts and stops without opening the store or reading the directory."""
    async with _builder(plugin, missing_dir).build() as host:
        assert host.state is HostState.RUNNING
        assert plugin.factory_calls == 0
        status = host.services.get(RagIngestionManager).status("docs")
        assert status.readiness is RagIndexReadiness.NOT_INITIALIZED
        assert status.last_operation is None
    assert host.state is HostState.STOPPED
    assert plugin.factory_calls == 0
    assert _untouched(missing_dir)


async def test_the_failure_surfaces_when_the_index_is_queried(plugin: ExplodingStorePlugin, missing_dir: Path) -> None:
    """The first retrieval opens the store; the factory's failure reaches the caller as a content-free
    VectorStoreUnavailableError (the factory's own text may carry a DSN)."""
    async with _builder(plugin, missing_dir).build() as host:
        retriever = host.services.get(RagRetriever)
        with pytest.raises(VectorStoreUnavailableError):
            await retriever.retrieve(RagQuery(index_name="docs", text="anything", mode=RagRetrievalMode.SEMANTIC))
        assert plugin.factory_calls == 1


async def test_the_failure_surfaces_when_the_index_is_ingested(plugin: ExplodingStorePlugin, missing_dir: Path) -> None:
    """A manual ingestion run opens the store and ends FAILED with a content-free failure code."""
    async with _builder(plugin, missing_dir).build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.FAILED
        assert operation.last_failure is not None
        assert operation.last_failure.code == "ingestion_failed"
        assert plugin.factory_calls == 1


async def test_on_startup_strategy_surfaces_the_failure_at_start(
    plugin: ExplodingStorePlugin, missing_dir: Path
) -> None:
    """With OnStartup the host uses the index while starting, so start() fails and the host is FAILED."""
    host = _builder(plugin, missing_dir, strategy="on_startup").build()
    assert plugin.factory_calls == 0
    with pytest.raises(StartupIngestionError):
        await host.start()
    assert host.state is HostState.FAILED
    assert plugin.factory_calls == 1


async def test_missing_directory_fails_only_when_ingested(missing_dir: Path) -> None:
    """With a working store, a missing directory is only noticed by an ingestion run (FAILED), never before."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs", lambda i: i.use_directory(missing_dir).use_in_memory_vector_store().use_default_mode("lexical")
        ),
    )
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.FAILED
    assert _untouched(missing_dir)


async def test_sources_are_read_only_by_ingestion() -> None:
    """Registration, build and a Manual start never call a source's read(); a manual run calls it once."""
    CountingSource.reads = 0
    source = CountingSource([RagDocument(document_id="a", content="alpha beta")])
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs", lambda i: i.add_source(source).use_in_memory_vector_store().use_default_mode("lexical")
        ),
    )
    host = builder.build()
    assert CountingSource.reads == 0
    async with host:
        assert CountingSource.reads == 0
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
    assert CountingSource.reads == 1


def test_plugin_module_objects_work_the_same(missing_dir: Path) -> None:
    """A module-object plugin with the same hook is loaded the same way (pluggy's canonical plugin form)."""
    calls: list[int] = []
    module = types.ModuleType("exploding_module_plugin")

    def factory(options: Any) -> Any:
        calls.append(1)
        raise StoreFactoryCalled("opened")

    @hookimpl
    def runiq_register_providers(registry: ProviderRegistry) -> None:
        registry.add_vector_store("exploding", factory)

    module.runiq_register_providers = runiq_register_providers  # type: ignore[attr-defined]
    builder = HostBuilder(load_entry_points=False, plugins=[module])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs", lambda i: i.use_directory(missing_dir).use_vector_store("exploding").use_default_mode("lexical")
        ),
    )
    builder.build()
    assert calls == []

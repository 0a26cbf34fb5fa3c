"""Each hook exercised for real through ``HostBuilder(load_entry_points=False, plugins=[obj])``."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from runiq.hosting import HostBuilder, HostState, ServiceProvider
from runiq.plugins import ProviderRegistry, hookimpl
from runiq.rag import (
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._loaders import LoaderRegistry, PlainTextLoader
from runiq.rag.providers import HashingEmbedder, InMemoryVectorStore, ProviderKind


def _plugin(name: str, **hooks: Callable[..., Any]) -> types.ModuleType:
    """A module plugin (pluggy's canonical form) whose canonical name is ``name``."""
    module = types.ModuleType(name)
    for hook_name, function in hooks.items():
        setattr(module, hook_name, hookimpl(function))
    return module


class _Dims(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dimensions: int = 32


def test_hook_runiq_register_providers_names_are_usable_by_indexes() -> None:
    """Providers registered by the hook are recorded with their plugin and selectable by name."""

    @asynccontextmanager
    async def embedding(options: _Dims) -> AsyncIterator[HashingEmbedder]:
        yield HashingEmbedder(options.dimensions)

    def register(registry: ProviderRegistry) -> None:
        registry.add_embedding("docs-embedding", embedding, options=_Dims)

    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("docs-plugin", runiq_register_providers=register)])
    spec = builder.providers.get(ProviderKind.EMBEDDING, "docs-embedding")
    assert (spec.plugin, spec.options_model) == ("docs-plugin", _Dims)
    rag = add_runiq_rag(
        builder,
        lambda r: r.add_index(
            "docs",
            lambda i: (
                i.use_directory("docs").use_embedding("docs-embedding", dimensions=16).use_in_memory_vector_store()
            ),
        ),
    )
    (definition,) = rag.definitions
    assert definition.embedding is not None
    assert definition.embedding.options == _Dims(dimensions=16)
    with pytest.raises(RagConfigurationError):
        rag.add_index("bad", lambda i: i.use_directory("docs").use_embedding("docs-embedding", dims=16))


async def test_hook_runiq_register_providers_factories_open_lazily_and_close_with_the_host() -> None:
    """The host enters a registered factory on first use, serves retrieval through it, and exits it on stop."""
    lifecycle: list[str] = []

    @asynccontextmanager
    async def store(options: BaseModel) -> AsyncIterator[InMemoryVectorStore]:
        lifecycle.append("open")
        yield InMemoryVectorStore()
        lifecycle.append("close")

    def register(registry: ProviderRegistry) -> None:
        registry.add_vector_store("docs-store", store)

    documents = [
        RagDocument(document_id="a", content="CS1503 argument type"),
        RagDocument(document_id="b", content="other"),
    ]
    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("store-plugin", runiq_register_providers=register)])
    add_runiq_rag(
        builder,
        lambda r: r.add_index(
            "docs",
            lambda i: (
                i.use_documents(documents).use_vector_store("docs-store").use_default_mode(RagRetrievalMode.LEXICAL)
            ),
        ),
    )
    async with builder.build() as host:
        assert lifecycle == []
        await host.services.get(RagIngestionManager).run("docs")
        result = await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="CS1503"))
        assert [hit.document_id for hit in result.hits] == ["a"]
        assert lifecycle == ["open"]
    assert lifecycle == ["open", "close"]


def test_hook_runiq_register_providers_duplicate_names_fail_naming_both_plugins() -> None:
    """Two plugins registering one name for the same kind is a configuration error naming both."""

    @asynccontextmanager
    async def nothing(options: BaseModel) -> AsyncIterator[object]:
        yield object()

    def register(registry: ProviderRegistry) -> None:
        registry.add_embedding("shared", nothing)

    plugins = [
        _plugin("first", runiq_register_providers=register),
        _plugin("second", runiq_register_providers=register),
    ]
    with pytest.raises(RagConfigurationError) as caught:
        HostBuilder(load_entry_points=False, plugins=plugins)
    assert "'first'" in str(caught.value)
    assert "'second'" in str(caught.value)


class _Participant:
    def __init__(self, log: list[str], name: str) -> None:
        self._log = log
        self._name = name

    async def start(self) -> None:
        self._log.append(f"start {self._name}")

    async def stop(self) -> None:
        self._log.append(f"stop {self._name}")


async def test_hook_runiq_configure_host_adds_services_and_participants() -> None:
    """Services added by the hook resolve from the host; its participants start after the app's and stop first."""
    log: list[str] = []

    class Marker:
        pass

    def configure(builder: HostBuilder) -> None:
        builder.services.add_singleton(Marker, lambda _: Marker())
        builder.add_lifecycle_participant(lambda _: _Participant(log, "plugin"))

    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("host-plugin", runiq_configure_host=configure)])
    builder.add_lifecycle_participant(lambda _: _Participant(log, "app"))
    host = builder.build()
    assert host.state is HostState.CREATED
    assert log == []
    async with host:
        assert isinstance(host.services.get(Marker), Marker)
        assert log == ["start app", "start plugin"]
    assert log == ["start app", "start plugin", "stop plugin", "stop app"]


def test_hook_runiq_configure_host_sees_app_registrations_and_settings() -> None:
    """The hook runs at build(), after the application's registrations, and can defer to them (TryAdd)."""
    seen: list[object] = []

    class Clock:
        def __init__(self, source: str) -> None:
            self.source = source

    def configure(builder: HostBuilder) -> None:
        seen.append(builder.settings.plugins.get("host-plugin", {}))
        seen.append(RagRetriever in builder.services)
        builder.services.try_add_singleton(Clock, lambda _: Clock("plugin"))

    from runiq.settings import RuniqSettings

    builder = HostBuilder(
        settings=RuniqSettings(plugins={"host-plugin": {"interval": 5}}),
        load_entry_points=False,
        plugins=[_plugin("host-plugin", runiq_configure_host=configure)],
    )
    add_runiq_rag(builder)
    builder.services.add_singleton(Clock, lambda _: Clock("app"))
    assert seen == []  # not called before build()
    host = builder.build()
    assert seen == [{"interval": 5}, True]
    assert host.services.get(Clock).source == "app"
    with pytest.raises(RuntimeError):
        host.services.add_instance(Clock, Clock("late"))  # frozen after the hook


def test_hook_runiq_configure_host_is_called_once_per_build() -> None:
    """One call per built host; a second build() of the same builder is refused."""
    calls: list[ServiceProvider] = []

    def configure(builder: HostBuilder) -> None:
        calls.append(builder.services)

    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("once", runiq_configure_host=configure)])
    builder.build()
    assert len(calls) == 1
    with pytest.raises(RuntimeError):
        builder.build()
    assert len(calls) == 1


def test_hook_runiq_register_loaders_resolves_extensions_and_records_the_plugin() -> None:
    """A loader registered by the hook resolves by extension (any case) and media type, attributed to its plugin."""
    rst = PlainTextLoader("restructuredtext", frozenset({".rst"}), frozenset({"text/x-rst"}))

    def register(registry: LoaderRegistry) -> None:
        registry.add(rst)

    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("rst-plugin", runiq_register_loaders=register)])
    assert builder.loaders.for_path("docs/Guide.RST") is rst
    assert builder.loaders.for_media_type("text/x-rst; charset=utf-8") is rst
    assert builder.loaders.get("restructuredtext").plugin == "rst-plugin"
    assert {".rst", ".md", ".html", ".json", ".csv", ".txt"} <= builder.loaders.extensions
    assert builder.loaders.for_path("notes.unknown") is None


def test_hook_runiq_register_loaders_builtins_use_the_same_hook() -> None:
    """The built-in loaders are the plugin runiq.builtins: blocking it leaves the registry empty."""
    assert HostBuilder(load_entry_points=False).loaders.get("html").plugin == "runiq.builtins"
    from runiq.settings import RuniqSettings

    builder = HostBuilder(settings=RuniqSettings(disabled_plugins=("runiq.builtins",)), load_entry_points=False)
    assert builder.loaders.names() == []
    assert builder.loaders.extensions == frozenset()


def test_hook_runiq_register_loaders_conflicts_name_both_plugins_unless_replacing() -> None:
    """Claiming a built-in's extension fails naming both plugins; replace=True takes it over explicitly."""

    def claim(registry: LoaderRegistry) -> None:
        registry.add(PlainTextLoader("raw-html", frozenset({".html"}), frozenset()))

    with pytest.raises(RagConfigurationError) as caught:
        HostBuilder(load_entry_points=False, plugins=[_plugin("html-plugin", runiq_register_loaders=claim)])
    assert "'runiq.builtins'" in str(caught.value)
    assert "'html-plugin'" in str(caught.value)
    assert "'.html'" in str(caught.value)

    def take_over(registry: LoaderRegistry) -> None:
        registry.add(PlainTextLoader("raw-html", frozenset({".html"}), frozenset()), replace=True)

    builder = HostBuilder(load_entry_points=False, plugins=[_plugin("html-plugin", runiq_register_loaders=take_over)])
    loader = builder.loaders.for_path("page.html")
    assert loader is not None
    assert loader.name == "raw-html"
    html = builder.loaders.for_path("page.htm")  # the built-in keeps what was not taken over
    assert html is not None
    assert html.name == "html"

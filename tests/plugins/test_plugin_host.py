"""PluginHost: one pluggy manager per host, built-ins through the same hooks, block list, check_pending."""

from __future__ import annotations

import importlib.metadata
import types
from collections.abc import Callable
from pathlib import Path

import pluggy
import pytest

from runiq.errors import RagConfigurationError
from runiq.hosting import HostBuilder
from runiq.plugins import PluginHost, ProviderKind, ProviderRegistry, hookimpl, hookspecs
from runiq.rag.testing.chains import assert_content_free
from runiq.settings import RuniqSettings

PluginFactory = Callable[..., types.ModuleType]


def test_markers_and_hook_names_use_the_runiq_project() -> None:
    """Markers, the project name and the entry-point group are all ``runiq``; every hook is ``runiq_*``."""
    assert hookspecs.PROJECT_NAME == "runiq"
    assert hookspecs.hookimpl.project_name == "runiq"
    assert hookspecs.hookspec.project_name == "runiq"
    specs = [name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "runiq_spec")]
    assert specs
    assert all(name.startswith("runiq_") for name in specs)


def test_builtins_register_through_the_same_hook() -> None:
    """The in-memory store and hashing embedder come from the ``runiq.builtins`` plugin's hookimpl,
    which the host builder hands to the plugin host."""
    builder = HostBuilder(load_entry_points=False)
    assert "runiq.builtins" in builder.plugins.plugin_names
    assert builder.providers.get(ProviderKind.EMBEDDING, "hashing").plugin == "runiq.builtins"
    assert builder.providers.get(ProviderKind.VECTOR_STORE, "in-memory").plugin == "runiq.builtins"


def test_the_plugin_host_has_no_builtins_of_its_own(provider_plugin: PluginFactory) -> None:
    """PluginHost registers the built-ins it is handed, by name and first; a blocked one is skipped."""
    assert PluginHost.create(load_entry_points=False).plugin_names == []
    builtin, extra = provider_plugin("ignored", embedding="base"), provider_plugin("extra", embedding="more")
    host = PluginHost.create(load_entry_points=False, builtins={"acme.builtins": builtin}, plugins=[extra])
    assert host.plugin_names == ["acme.builtins", "extra"]
    registry = ProviderRegistry()
    host.register_providers(registry)
    assert registry.get(ProviderKind.EMBEDDING, "base").plugin == "acme.builtins"
    blocked = PluginHost.create(load_entry_points=False, builtins={"acme.builtins": builtin}, blocked=["acme.builtins"])
    assert blocked.plugin_names == []


def test_each_host_gets_its_own_plugin_manager(provider_plugin: PluginFactory) -> None:
    """A plugin given to one host is not seen by the next (no module-level manager)."""
    first = HostBuilder(load_entry_points=False, plugins=[provider_plugin("only-here", embedding="local")])
    second = HostBuilder(load_entry_points=False)
    assert "local" in first.providers.names(ProviderKind.EMBEDDING)
    assert "local" not in second.providers.names(ProviderKind.EMBEDDING)
    assert "only-here" not in second.plugins.plugin_names


def test_blocked_plugin_is_not_loaded(provider_plugin: PluginFactory) -> None:
    """A plugin named in RuniqSettings.disabled_plugins is not registered and contributes nothing."""
    plugins = [provider_plugin("wanted", embedding="kept"), provider_plugin("unwanted", embedding="dropped")]
    builder = HostBuilder(
        settings=RuniqSettings(disabled_plugins=("unwanted",)), load_entry_points=False, plugins=plugins
    )
    assert "wanted" in builder.plugins.plugin_names
    assert "unwanted" not in builder.plugins.plugin_names
    names = builder.providers.names(ProviderKind.EMBEDDING)
    assert "kept" in names
    assert "dropped" not in names


def test_builtins_can_be_blocked_too() -> None:
    """Blocking ``runiq.builtins`` removes the built-in providers, proving they are an ordinary plugin."""
    builder = HostBuilder(settings=RuniqSettings(disabled_plugins=("runiq.builtins",)), load_entry_points=False)
    assert builder.providers.names(ProviderKind.EMBEDDING) == []
    assert builder.providers.names(ProviderKind.VECTOR_STORE) == []


def test_misspelt_hookimpl_fails_check_pending(make_plugin: PluginFactory) -> None:
    """A hookimpl whose name matches no hookspec (``runiq_register_provider``) fails loudly at load."""

    def runiq_register_provider(registry: ProviderRegistry) -> None:
        raise AssertionError("never called")

    plugin = make_plugin("typo", runiq_register_provider=runiq_register_provider)
    with pytest.raises(pluggy.PluginValidationError, match="runiq_register_provider"):
        PluginHost.create(load_entry_points=False, plugins=[plugin])
    with pytest.raises(pluggy.PluginValidationError):
        HostBuilder(load_entry_points=False, plugins=[plugin])


def test_hookimpl_with_an_unknown_argument_is_rejected(make_plugin: PluginFactory) -> None:
    """A hookimpl asking for an argument the hookspec does not offer is rejected at registration."""

    def runiq_register_providers(registy: ProviderRegistry) -> None:
        raise AssertionError("never called")

    with pytest.raises(pluggy.PluginValidationError, match="registy"):
        PluginHost.create(
            load_entry_points=False, plugins=[make_plugin("bad-arg", runiq_register_providers=runiq_register_providers)]
        )


def test_unmarked_functions_are_not_hooks() -> None:
    """A plugin's own helper without @hookimpl is ignored, even when named like a hook."""
    plugin = types.ModuleType("helpers")
    called: list[str] = []
    plugin.runiq_register_providers = lambda registry: called.append("x")  # type: ignore[attr-defined]
    HostBuilder(load_entry_points=False, plugins=[plugin])
    assert called == []


def test_hook_runiq_register_providers_is_called_once_per_host_builder(make_plugin: PluginFactory) -> None:
    """runiq_register_providers runs once per HostBuilder, with that builder's registry."""
    registries: list[ProviderRegistry] = []

    def runiq_register_providers(registry: ProviderRegistry) -> None:
        registries.append(registry)

    builder = HostBuilder(
        load_entry_points=False, plugins=[make_plugin("counter", runiq_register_providers=runiq_register_providers)]
    )
    builder.build()
    assert registries == [builder.providers]


def test_hook_runiq_register_providers_errors_propagate(make_plugin: PluginFactory) -> None:
    """A plugin whose registration hook raises makes the host builder fail instead of half-registering."""

    def runiq_register_providers(registry: ProviderRegistry) -> None:
        raise RuntimeError("plugin bug")

    with pytest.raises(RuntimeError, match="plugin bug"):
        HostBuilder(
            load_entry_points=False, plugins=[make_plugin("buggy", runiq_register_providers=runiq_register_providers)]
        )


def test_a_plugin_that_fails_to_import_is_named_with_nothing_of_its_exception_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugin's import error (here quoting a DSN read at import time) is replaced by a
    configuration error naming the entry point and the exception's class, raised outside ``except``."""
    secret = "postgresql://app:CANARY-plugin-password@db/rag"
    (tmp_path / "runiq_broken_plugin.py").write_text(f"raise RuntimeError({secret!r})\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry_point = importlib.metadata.EntryPoint(name="broken", value="runiq_broken_plugin", group="runiq")
    distribution = types.SimpleNamespace(entry_points=[entry_point], metadata={"Name": "runiq-broken"})
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: [distribution])
    with pytest.raises(
        RagConfigurationError, match=r"'broken' from distribution 'runiq-broken'.*RuntimeError"
    ) as caught:
        PluginHost.create(load_entry_points=True)
    assert caught.value.__context__ is None
    assert_content_free(caught.value, "CANARY-plugin-password")


def test_hookimpl_is_reexported_from_runiq_rag() -> None:
    """Plugins import the marker from ``runiq.rag``; it is the same object as ``runiq.plugins.hookimpl``."""
    from runiq.rag.providers import hookimpl as rag_hookimpl

    assert rag_hookimpl is hookimpl

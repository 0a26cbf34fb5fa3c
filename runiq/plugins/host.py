"""``PluginHost``: builds a pluggy manager per host and is the only place that calls hooks."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import pluggy

from runiq.errors import RagConfigurationError
from runiq.plugins import hookspecs

if TYPE_CHECKING:
    from runiq.cli.extensions import CommandRegistry
    from runiq.hosting.builder import HostBuilder
    from runiq.plugins.registry import ProviderRegistry
    from runiq.rag._loaders.registry import LoaderRegistry

__all__ = ["CLI_ENTRY_POINT_GROUP", "PluginHost"]

# Plugins that add ``runiq`` commands declare them in their own group, so that ``runiq --help`` imports
# those small modules only, never the provider plugins (and their SDKs) of the ``runiq`` group.
CLI_ENTRY_POINT_GROUP = "runiq.cli"

UnloadableHandler = Callable[[RagConfigurationError], None]


def _raise(error: RagConfigurationError) -> None:
    raise error


def _load_entry_points(manager: pluggy.PluginManager, group: str, on_unloadable: UnloadableHandler) -> None:
    """Like pluggy's loader, but a plugin that fails to import is named in a clear configuration error."""
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != group or manager.get_plugin(ep.name) or manager.is_blocked(ep.name):
                continue
            plugin, failure = _load(ep)
            if failure is not None:
                on_unloadable(_unloadable(ep.name, dist.metadata["Name"], failure))
                continue
            manager.register(plugin, name=ep.name)


def _load(entry_point: importlib.metadata.EntryPoint) -> tuple[object, str | None]:
    """The plugin object, or the name of the exception class its import raised. The exception itself
    is dropped: an import error can quote a path or a value read at import time."""
    try:
        return entry_point.load(), None
    except Exception as exc:
        failure = type(exc).__name__
    return None, failure


def _unloadable(entry_point: str, distribution: str, failure: str) -> RagConfigurationError:
    return RagConfigurationError(
        f"runiq plugin '{entry_point}' from distribution '{distribution}' could not be loaded "
        f"({failure}); fix or uninstall it, or block it with RUNIQ_DISABLED_PLUGINS."
    )


class PluginHost:
    """A typed facade over one :class:`pluggy.PluginManager`.

    There is no module-level manager: each host builds its own, so tests can build hosts with
    ``load_entry_points=False`` and explicit plugin objects without global state. The plugin host
    knows no plugin of its own: whoever creates it hands over the built-ins (the host builder hands
    over runiq's RAG built-ins).
    """

    def __init__(self, manager: pluggy.PluginManager) -> None:
        self._pm = manager

    @classmethod
    def create(
        cls,
        *,
        builtins: Mapping[str, object] | None = None,
        plugins: Iterable[object] = (),
        load_entry_points: bool = True,
        entry_point_group: str = hookspecs.PROJECT_NAME,
        blocked: Iterable[str] = (),
        on_unloadable: UnloadableHandler = _raise,
    ) -> PluginHost:
        """A manager with the hook specifications and, in this order, ``builtins`` (name -> plugin),
        ``plugins`` and the entry points of ``entry_point_group``. A name in ``blocked`` is not
        registered, built-in or not. A plugin that fails to import raises a :class:`RagConfigurationError`
        naming it, unless ``on_unloadable`` takes the error (and the plugin is skipped)."""
        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        for name in blocked:
            manager.set_blocked(name)
        for name, plugin in (builtins or {}).items():
            if not manager.is_blocked(name):
                manager.register(plugin, name=name)
        for plugin in plugins:
            manager.register(plugin)
        if load_entry_points:
            _load_entry_points(manager, entry_point_group, on_unloadable)
        # A misspelt hook implementation name fails here instead of being silently ignored.
        manager.check_pending()
        return cls(manager)

    @property
    def plugin_names(self) -> list[str]:
        return sorted(name for name, plugin in self._pm.list_name_plugin() if plugin is not None)

    def register_providers(self, registry: ProviderRegistry) -> None:
        for impl in self._pm.hook.runiq_register_providers.get_hookimpls():
            registry.set_current_plugin(impl.plugin_name)
            impl.function(registry=registry)
        registry.set_current_plugin("<direct>")

    def register_loaders(self, registry: LoaderRegistry) -> None:
        for impl in self._pm.hook.runiq_register_loaders.get_hookimpls():
            registry.set_current_plugin(impl.plugin_name)
            impl.function(registry=registry)
        registry.set_current_plugin("<direct>")

    def register_cli_commands(self, registry: CommandRegistry) -> None:
        for impl in self._pm.hook.runiq_register_cli_commands.get_hookimpls():
            registry.set_current_plugin(impl.plugin_name)
            impl.function(commands=registry)
        registry.set_current_plugin("<direct>")

    def configure_host(self, builder: HostBuilder) -> None:
        self._pm.hook.runiq_configure_host(builder=builder)

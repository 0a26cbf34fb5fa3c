"""``PluginHost``: builds a pluggy manager per host and is the only place that calls hooks."""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

from runiq.errors import RagConfigurationError, call_translated
from runiq.plugins import hookspecs
from runiq.plugins.registry import ProviderRegistry

if TYPE_CHECKING:
    from runiq.hosting.builder import HostBuilder
    from runiq.rag.loaders.registry import LoaderRegistry

__all__ = ["PluginHost"]

BUILTINS_NAME = "runiq.builtins"


def _load_entry_points(manager: pluggy.PluginManager) -> None:
    """Like pluggy's loader, but a plugin that fails to import is named in a clear configuration error."""
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != hookspecs.PROJECT_NAME or manager.get_plugin(ep.name) or manager.is_blocked(ep.name):
                continue
            # Raised outside ``except``: an import error can quote a path or a value read at import time.
            plugin = call_translated(ep.load, functools.partial(_unloadable, ep.name, dist.metadata["Name"]))
            manager.register(plugin, name=ep.name)


def _unloadable(entry_point: str, distribution: str, exc: Exception) -> RagConfigurationError:
    return RagConfigurationError(
        f"runiq plugin '{entry_point}' from distribution '{distribution}' could not be loaded "
        f"({type(exc).__name__}); fix or uninstall it, or block it with RUNIQ_DISABLED_PLUGINS."
    )


class PluginHost:
    """A typed facade over one :class:`pluggy.PluginManager`.

    There is no module-level manager: each host builds its own, so tests can build hosts with
    ``load_entry_points=False`` and explicit plugin objects without global state.
    """

    def __init__(self, manager: pluggy.PluginManager) -> None:
        self._pm = manager

    @classmethod
    def create(
        cls,
        *,
        load_entry_points: bool = True,
        plugins: Iterable[object] = (),
        blocked: Iterable[str] = (),
    ) -> PluginHost:
        from runiq.rag import builtins

        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        for name in blocked:
            manager.set_blocked(name)
        if not manager.is_blocked(BUILTINS_NAME):
            manager.register(builtins, name=BUILTINS_NAME)
        for plugin in plugins:
            manager.register(plugin)
        if load_entry_points:
            _load_entry_points(manager)
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

    def configure_host(self, builder: HostBuilder) -> None:
        self._pm.hook.runiq_configure_host(builder=builder)

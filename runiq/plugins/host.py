"""``PluginHost``: builds a pluggy manager per host and is the only place that calls hooks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

from runiq.plugins import hookspecs
from runiq.plugins.registry import ProviderRegistry

if TYPE_CHECKING:
    from runiq.hosting.builder import HostBuilder

__all__ = ["PluginHost"]

BUILTINS_NAME = "runiq.builtins"


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
            manager.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
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

    def configure_host(self, builder: HostBuilder) -> None:
        self._pm.hook.runiq_configure_host(builder=builder)

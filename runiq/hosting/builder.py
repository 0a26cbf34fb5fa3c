"""``HostBuilder``: collects services, participants and plugins; builds a :class:`Host`. No I/O."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from runiq.hosting.host import Host, ParticipantFactory
from runiq.hosting.services import ServiceProvider
from runiq.plugins.host import PluginHost
from runiq.plugins.registry import ProviderRegistry
from runiq.settings import RuniqSettings

__all__ = ["HostBuilder"]


class HostBuilder:
    """Compose a host. Plugins are loaded here (entry points of group ``runiq``) so registration can
    validate provider names; loading imports modules but opens no connection and starts no task.
    ``providers`` and ``loaders`` hold what the plugins (built-ins first) registered.

    Args:
        settings: process settings; defaults to ``RuniqSettings()`` (environment only).
        plugins: extra plugin objects to register (tests pass these with ``load_entry_points=False``).
        load_entry_points: discover installed plugin distributions.
    """

    def __init__(
        self,
        *,
        settings: RuniqSettings | None = None,
        plugins: Iterable[object] = (),
        load_entry_points: bool = True,
    ) -> None:
        self.settings = settings if settings is not None else RuniqSettings()
        self.plugins = PluginHost.create(
            load_entry_points=load_entry_points, plugins=plugins, blocked=self.settings.disabled_plugins
        )
        self.providers = ProviderRegistry()
        self.plugins.register_providers(self.providers)
        from runiq.rag.loaders.registry import LoaderRegistry  # runiq.rag imports this module

        self.loaders = LoaderRegistry()
        self.plugins.register_loaders(self.loaders)
        self.services = ServiceProvider()
        self.properties: dict[str, Any] = {}
        self._participants: list[ParticipantFactory] = []
        self._built = False

    def add_lifecycle_participant(self, factory: ParticipantFactory) -> None:
        """Participants start in the order added and stop in reverse."""
        self._participants.append(factory)

    def build(self) -> Host:
        if self._built:
            raise RuntimeError("A HostBuilder builds one host.")
        self._built = True
        self.plugins.configure_host(self)
        for finalize in self.properties.get("runiq.finalizers", []):
            finalize()
        self.services.freeze()
        return Host(self.services, list(self._participants))

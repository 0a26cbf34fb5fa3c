"""``HostBuilder``: collects services, participants and plugins; builds a :class:`Host`. No I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar, cast

from runiq.hosting.host import Host, ParticipantFactory
from runiq.hosting.services import ServiceProvider
from runiq.plugins.host import PluginHost
from runiq.plugins.registry import ProviderRegistry
from runiq.settings import RuniqSettings

__all__ = ["BUILTINS_NAME", "HostBuilder", "builtin_plugins"]

E = TypeVar("E")

BUILTINS_NAME = "runiq.builtins"  # block it (RUNIQ_DISABLED_PLUGINS) like any plugin


def builtin_plugins() -> Mapping[str, object]:
    """runiq's built-in providers as ``PluginHost.create(builtins=...)`` takes them (a host, a Ray worker)."""
    from runiq.rag import _builtins as builtins  # runiq.rag imports this module

    return {BUILTINS_NAME: builtins}


class HostBuilder:
    """Compose a host. Plugins are loaded here (entry points of group ``runiq``) so registration can
    validate provider names; loading imports modules but opens no connection and starts no task.
    ``providers`` and ``loaders`` hold what the plugins (runiq's built-ins first) registered.

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
            builtins=builtin_plugins(),
            plugins=plugins,
            load_entry_points=load_entry_points,
            blocked=self.settings.disabled_plugins,
        )
        self.providers = ProviderRegistry()
        self.plugins.register_providers(self.providers)
        from runiq.rag._loaders.registry import LoaderRegistry  # runiq.rag imports this module

        self.loaders = LoaderRegistry()
        self.plugins.register_loaders(self.loaders)
        self.services = ServiceProvider()
        self._extensions: dict[type[object], object] = {}
        self._build_steps: list[Callable[[], object]] = []
        self._participants: list[ParticipantFactory] = []
        self._built = False

    def add_lifecycle_participant(self, factory: ParticipantFactory) -> None:
        """Participants start in the order added and stop in reverse."""
        self._participants.append(factory)

    def get_or_add_extension(self, extension_type: type[E], create: Callable[[], E]) -> E:
        """The one ``extension_type`` object that configures this builder: ``create()`` makes it on the
        first call (and may register services and build steps); later calls return the same object.
        ``add_runiq_rag`` keeps its :class:`~runiq.rag.RagBuilder` here, so repeated calls accumulate."""
        if extension_type not in self._extensions:
            self._extensions[extension_type] = create()
        return cast(E, self._extensions[extension_type])

    def add_build_step(self, step: Callable[[], object]) -> None:
        """Run ``step`` in :meth:`build`, after the plugins' ``runiq_configure_host`` and before the
        services freeze, in the order added (``add_runiq_rag`` freezes its index registrations here)."""
        self._build_steps.append(step)

    def build(self) -> Host:
        if self._built:
            raise RuntimeError("A HostBuilder builds one host.")
        self._built = True
        self.plugins.configure_host(self)
        for step in self._build_steps:
            step()
        self.services.freeze()
        return Host(self.services, list(self._participants))

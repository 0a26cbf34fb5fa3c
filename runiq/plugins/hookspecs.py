"""Hook specifications. Project name and entry-point group: ``runiq``; hook names start with ``runiq_``.

Hooks are synchronous and do no I/O: they hand factories to runiq, and the host runs those factories
when it starts. Add arguments to a hook; never remove them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from runiq.cli.extensions import CommandRegistry
    from runiq.hosting.builder import HostBuilder
    from runiq.plugins.registry import ProviderRegistry
    from runiq.rag._loaders.registry import LoaderRegistry

__all__ = [
    "PROJECT_NAME",
    "hookimpl",
    "hookspec",
    "runiq_configure_host",
    "runiq_register_cli_commands",
    "runiq_register_loaders",
    "runiq_register_providers",
]

PROJECT_NAME = "runiq"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def runiq_register_providers(registry: ProviderRegistry) -> None:
    """Add embedding providers, vector stores and rerankers under unique names.

    Called once per :class:`~runiq.hosting.HostBuilder`, before any index is registered, so index
    registration can reject unknown provider names. Must not do I/O; register factories, not objects.
    """


@hookspec
def runiq_configure_host(builder: HostBuilder) -> None:
    """Contribute services or lifecycle participants to a host (for example a dashboard).

    Called by ``HostBuilder.build()`` before the container is frozen. Must not do I/O or start tasks;
    attach a lifecycle participant for anything that runs.
    """


@hookspec
def runiq_register_loaders(registry: LoaderRegistry) -> None:
    """Add document loaders: each reads the file extensions and media types it claims.

    Called once per :class:`~runiq.hosting.HostBuilder`, after ``runiq_register_providers``, the built-ins
    first. Must not do I/O; register loader objects, which must be picklable (they run in worker processes).
    """


@hookspec
def runiq_register_cli_commands(commands: CommandRegistry) -> None:
    """Add commands to the ``runiq`` command line (the dashboard adds ``runiq serve``).

    Called once per ``runiq`` invocation, when the command line first needs its list of commands, for
    the plugins of the entry-point group ``runiq.cli`` (not ``runiq``: ``runiq --help`` must not import
    provider plugins). Must not do I/O or import heavy modules: a command imports what it needs when it
    runs.
    """

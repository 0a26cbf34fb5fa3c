"""The ``runiq`` entry point: makes dashboard options available on every host built with plugins.

The hook registers configuration only (read lazily from ``RUNIQ_DASHBOARD__*`` on first use); it
starts no server. Serving is explicit: :func:`runiq_dashboard.serve` or ``runiq serve``.
"""

from __future__ import annotations

from runiq.hosting import HostBuilder
from runiq.rag.providers import hookimpl
from runiq_dashboard.options import DashboardOptions

__all__ = ["add_runiq_dashboard", "runiq_configure_host"]


def add_runiq_dashboard(builder: HostBuilder, options: DashboardOptions | None = None) -> None:
    """Register dashboard options on a host in code (they win over the environment)."""
    resolved = options if options is not None else DashboardOptions()
    builder.services.add_instance(DashboardOptions, resolved)


@hookimpl
def runiq_configure_host(builder: HostBuilder) -> None:
    if DashboardOptions not in builder.services:
        builder.services.add_singleton(DashboardOptions, lambda _: DashboardOptions.from_environment())

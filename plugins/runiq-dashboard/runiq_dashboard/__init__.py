"""runiq-dashboard: an embedded, access-controlled RAG management API and web page for runiq hosts.

Names load on first use (PEP 562): the ``runiq`` and ``runiq.cli`` entry points import
:mod:`runiq_dashboard.plugin` and :mod:`runiq_dashboard.cli`, and neither needs FastAPI or uvicorn
until a dashboard is created.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runiq_dashboard.access import (
        AccessOutcome,
        AccessPolicy,
        CredentialAccessPolicy,
        LoopbackAccessPolicy,
    )
    from runiq_dashboard.app import create_dashboard_app
    from runiq_dashboard.defaults import DEFAULT_PORT
    from runiq_dashboard.options import DEFAULT_BASE_PATH, DashboardCredential, DashboardOptions, DashboardRole
    from runiq_dashboard.plugin import add_runiq_dashboard
    from runiq_dashboard.server import DashboardServer, serve, serve_config

__all__ = [
    "DEFAULT_BASE_PATH",
    "DEFAULT_PORT",
    "AccessOutcome",
    "AccessPolicy",
    "CredentialAccessPolicy",
    "DashboardCredential",
    "DashboardOptions",
    "DashboardRole",
    "DashboardServer",
    "LoopbackAccessPolicy",
    "add_runiq_dashboard",
    "create_dashboard_app",
    "serve",
    "serve_config",
]

_LAZY = {
    **dict.fromkeys(
        ("AccessOutcome", "AccessPolicy", "CredentialAccessPolicy", "LoopbackAccessPolicy"), "runiq_dashboard.access"
    ),
    "create_dashboard_app": "runiq_dashboard.app",
    "DEFAULT_PORT": "runiq_dashboard.defaults",
    **dict.fromkeys(
        ("DEFAULT_BASE_PATH", "DashboardCredential", "DashboardOptions", "DashboardRole"), "runiq_dashboard.options"
    ),
    "add_runiq_dashboard": "runiq_dashboard.plugin",
    **dict.fromkeys(("DashboardServer", "serve", "serve_config"), "runiq_dashboard.server"),
}


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(_importlib.import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))

"""runiq-dashboard: an embedded, access-controlled RAG management API and web page for runiq hosts."""

from __future__ import annotations

from runiq_dashboard.access import (
    AccessOutcome,
    AccessPolicy,
    CredentialAccessPolicy,
    LoopbackAccessPolicy,
)
from runiq_dashboard.app import create_dashboard_app
from runiq_dashboard.options import DEFAULT_BASE_PATH, DashboardCredential, DashboardOptions, DashboardRole
from runiq_dashboard.plugin import add_runiq_dashboard
from runiq_dashboard.server import DEFAULT_PORT, DashboardServer, serve, serve_config

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

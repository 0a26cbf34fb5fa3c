"""``create_dashboard_app(host, options)``: the dashboard as a FastAPI application.

Every route lives under ``options.base_path`` and carries the one access dependency
(:func:`runiq_dashboard.access.access_dependency`, attached at application level): the page, its
assets, the API, the OpenAPI document and the catch-all that answers unknown API paths with a fixed
404. FastAPI's own docs and OpenAPI routes are disabled because they would bypass the dependency.

The application is wrapped in :func:`runiq_dashboard.middleware.around_application`, outside
FastAPI's stack, so no exception leaves it for the server to log. FastAPI's native OpenTelemetry
exception logs (which carry the message) are off for the same reason.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp

from runiq.hosting import Host
from runiq.rag import IndexRegistry, RagIngestionManager
from runiq_dashboard.access import access_dependency
from runiq_dashboard.middleware import around_application
from runiq_dashboard.options import DashboardOptions
from runiq_dashboard.page import page_router
from runiq_dashboard.problems import ProblemError, endpoint_not_found, install_problem_handlers
from runiq_dashboard.routes import rag_router

__all__ = ["create_dashboard_app", "options_for"]

_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def options_for(host: Host, options: DashboardOptions | None = None) -> DashboardOptions:
    """Explicit options win; then options registered on the host (``add_runiq_dashboard`` or the
    plugin hook, which reads ``RUNIQ_DASHBOARD__*``); then the defaults (loopback only)."""
    if options is not None:
        return options
    if DashboardOptions in host.services:
        return host.services.get(DashboardOptions)
    return DashboardOptions()


def create_dashboard_app(host: Host, options: DashboardOptions | None = None) -> FastAPI:
    """Build the dashboard for ``host``. The app does not start or stop the host (see
    :func:`runiq_dashboard.serve`); mount it in a host application or run it with uvicorn.

    Args:
        host: a built runiq host; RAG endpoints exist when RAG is registered on it.
        options: base path, title and access configuration; see :class:`DashboardOptions`.
    """
    resolved = options_for(host, options)
    base = resolved.base_path
    app = _DashboardApp(
        title=resolved.title,
        version=_version(),
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        description="Runiq dashboard: RAG index management. Every endpoint is behind the dashboard's access policy.",
        dependencies=[Depends(access_dependency(resolved))],
        telemetry={"logs": False},
    )
    install_problem_handlers(app)

    api = APIRouter(prefix=f"{base}/api")
    if IndexRegistry in host.services and RagIngestionManager in host.services:
        api.include_router(rag_router(host.services.get(IndexRegistry), host.services.get(RagIngestionManager)))

    @api.get("/openapi.json", include_in_schema=False)
    async def openapi_document() -> JSONResponse:
        return JSONResponse(app.openapi())

    @api.api_route("/{rest:path}", methods=_ALL_METHODS, include_in_schema=False)
    async def unknown_endpoint(rest: str) -> None:
        raise ProblemError(endpoint_not_found())

    app.include_router(api)
    app.include_router(page_router(base, resolved.title))
    app.state.runiq_dashboard_options = resolved
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("runiq-dashboard")
    except PackageNotFoundError:  # pragma: no cover - source tree without install
        return "0.0.0"


class _DashboardApp(FastAPI):
    def build_middleware_stack(self) -> ASGIApp:
        return around_application(super().build_middleware_stack())

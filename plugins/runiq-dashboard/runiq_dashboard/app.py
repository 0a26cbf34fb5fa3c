"""``create_dashboard_app(host, options)``: the dashboard as a FastAPI application.

Every route lives under ``options.base_path`` and carries the one access dependency
(:func:`runiq_dashboard.access.access_dependency`, attached at application level): the page, its
assets, the API and the OpenAPI document. Routing's own answers (404 for an unknown path, 405 with
``Allow`` for an undeclared method) run no route, so the problem handler applies the same dependency
before giving them. FastAPI's own docs and OpenAPI routes are disabled because they would bypass it.

The application is wrapped in :func:`runiq_dashboard.middleware.around_application`, outside
FastAPI's stack, so no exception leaves it for the server to log. FastAPI's native OpenTelemetry
exception logs (which carry the message) are off for the same reason.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp

from runiq.hosting import Host
from runiq_dashboard.access import access_dependency, granted_roles, policy_for
from runiq_dashboard.context import rag_services
from runiq_dashboard.dto import AccessDto
from runiq_dashboard.middleware import around_application
from runiq_dashboard.options import DashboardOptions
from runiq_dashboard.page import page_router
from runiq_dashboard.problems import install_problem_handlers
from runiq_dashboard.routes import rag_router

__all__ = ["create_dashboard_app", "options_for"]


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
    policy = policy_for(resolved)
    enforce_access = access_dependency(resolved, policy)
    app = _DashboardApp(
        title=resolved.title,
        version=_version(),
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        description="Runiq dashboard: RAG index management. Every endpoint is behind the dashboard's access policy.",
        dependencies=[Depends(enforce_access)],
        telemetry={"logs": False},
    )
    install_problem_handlers(app, enforce_access)

    api = APIRouter(prefix=f"{base}/api")
    rag = rag_services(host, resolved, policy)
    if rag is not None:
        api.include_router(rag_router(rag))

    @api.get("/access", response_model=AccessDto, tags=["access"])
    async def get_access(request: Request) -> AccessDto:
        """What the caller may do besides reading: the page offers Start/Cancel and the query playground
        only to callers holding operate and query."""
        return AccessDto(roles=[role.value for role in await granted_roles(policy, request, resolved)])

    @api.get("/openapi.json", include_in_schema=False)
    async def openapi_document() -> JSONResponse:
        return JSONResponse(app.openapi())

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

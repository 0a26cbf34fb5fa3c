"""The web page: one HTML document plus a script and a stylesheet, committed as plain files (no build).

The page uses relative URLs (``api/rag/indexes``), so it works under any base path; the base path
route redirects to the trailing-slash form so those URLs resolve. A strict Content-Security-Policy
allows only the dashboard's own script and stylesheet.
"""

from __future__ import annotations

import html
from functools import cache
from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse, Response

__all__ = ["page_router"]

_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_ASSETS = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}


@cache
def _static(name: str) -> str:
    return files("runiq_dashboard").joinpath("static", name).read_text(encoding="utf-8")


def page_router(base_path: str, title: str) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    document = _static("index.html").replace("{{title}}", html.escape(title))

    @router.get(base_path)
    async def redirect_to_page() -> RedirectResponse:
        return RedirectResponse(f"{base_path}/", status_code=307)

    @router.get(f"{base_path}/")
    async def page() -> HTMLResponse:
        return HTMLResponse(document, headers={"Content-Security-Policy": _CSP})

    @router.get(f"{base_path}/assets/{{name}}")
    async def asset(name: str) -> Response:
        media_type = _ASSETS.get(name)
        if media_type is None:
            from runiq_dashboard.problems import ProblemError, endpoint_not_found

            raise ProblemError(endpoint_not_found())
        return Response(_static(name), media_type=media_type)

    return router

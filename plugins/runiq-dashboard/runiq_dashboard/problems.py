"""Fixed problem documents and the exception handlers that produce them.

Every error response is ``{"code", "message", "activeOperation"}`` with a message written here, never
an exception's text, a request value or a path. Unexpected exceptions become the fixed 500 body here;
:class:`runiq_dashboard.middleware.ContainFailures` logs them, by type only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from runiq_dashboard.dto import ProblemDto, RagOperationDto

__all__ = [
    "Problem",
    "ProblemError",
    "active_operation_conflict",
    "forbidden",
    "index_not_found",
    "index_not_ingested",
    "install_problem_handlers",
    "internal_error",
    "invalid_request",
    "lexical_not_supported",
    "method_not_allowed",
    "no_active_operation",
    "rate_limited",
    "request_too_large",
    "retrieval_failed",
    "run_not_found",
    "store_unavailable",
    "unauthenticated",
]


@dataclass(frozen=True, slots=True)
class Problem:
    status: int
    code: str
    message: str
    active_operation: RagOperationDto | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def response(self) -> JSONResponse:
        body = ProblemDto(code=self.code, message=self.message, active_operation=self.active_operation)
        return JSONResponse(body.model_dump(mode="json", by_alias=True), status_code=self.status, headers=self.headers)


class ProblemError(Exception):
    """Raised by routes and the access dependency; rendered by :func:`install_problem_handlers`."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.code)
        self.problem = problem


def unauthenticated(*, browser: bool = False) -> Problem:
    # The page and its assets challenge with Basic so a browser asks for the key; the API with Bearer.
    challenge = 'Basic realm="Runiq Dashboard", charset="UTF-8"' if browser else 'Bearer realm="runiq-dashboard"'
    return Problem(
        401,
        "AuthenticationRequired",
        "Authentication is required to use the Runiq dashboard.",
        headers={"WWW-Authenticate": challenge},
    )


def forbidden() -> Problem:
    return Problem(403, "Forbidden", "You are not allowed to perform this dashboard action.")


def index_not_found() -> Problem:
    return Problem(404, "RagIndexNotFound", "The RAG index is not registered.")


def active_operation_conflict(active: RagOperationDto | None) -> Problem:
    return Problem(409, "ActiveIngestionOperation", "The index already has an active ingestion operation.", active)


def no_active_operation() -> Problem:
    return Problem(409, "NoActiveIngestionOperation", "The index has no active ingestion operation.")


def ingestion_unavailable() -> Problem:
    return Problem(503, "IngestionUnavailable", "The ingestion runtime is not running.")


def run_not_found() -> Problem:
    return Problem(404, "RagRunNotFound", "The ingestion run is not among the index's recent runs.")


def store_unavailable() -> Problem:
    return Problem(503, "StoreUnavailable", "The index's store could not be read.")


def invalid_request() -> Problem:
    return Problem(422, "InvalidRequest", "The request is not valid.")


def request_too_large() -> Problem:
    return Problem(413, "RequestTooLarge", "The request body is too large.")


def rate_limited(retry_after_seconds: int) -> Problem:
    return Problem(
        429, "RateLimited", "Too many queries; try again shortly.", headers={"Retry-After": str(retry_after_seconds)}
    )


def lexical_not_supported() -> Problem:
    return Problem(422, "LexicalNotSupported", "The index's store does not support lexical search.")


def index_not_ingested() -> Problem:
    return Problem(409, "RagIndexNotIngested", "The index holds no data yet: run ingestion first.")


def retrieval_failed() -> Problem:
    return Problem(503, "RetrievalFailed", "The index could not be searched.")


def endpoint_not_found() -> Problem:
    return Problem(404, "EndpointNotFound", "Runiq endpoint was not found.")


def method_not_allowed(allow: str) -> Problem:
    """``allow``: the framework's comma-separated list of the path's declared methods."""
    methods = ", ".join(sorted({m.strip() for m in allow.split(",") if m.strip()}))
    return Problem(405, "MethodNotAllowed", "The method is not allowed for this endpoint.", headers={"Allow": methods})


def internal_error() -> Problem:
    return Problem(500, "InternalError", "The dashboard could not complete the request.")


def _framework_problem(exc: StarletteHTTPException) -> Problem:
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        return endpoint_not_found()
    if exc.status_code == 405:
        return method_not_allowed(headers.get("Allow", ""))
    return Problem(exc.status_code, "RequestFailed", "The request could not be completed.", headers=headers)


def install_problem_handlers(app: FastAPI, enforce_access: Callable[[Request], Awaitable[None]]) -> None:
    """``enforce_access``: the access dependency, which routing's own 404 and 405 answers bypass."""

    async def on_problem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ProblemError)
        return exc.problem.response()

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        # FastAPI's default body echoes the offending input; ours does not.
        return invalid_request().response()

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code in (404, 405):  # no route ran, so neither did the dependency: a refused
            try:  # caller learns nothing about which paths and methods exist
                await enforce_access(request)
            except ProblemError as denied:
                return denied.problem.response()
        return _framework_problem(exc).response()

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        # Starlette re-raises after this answer; ContainFailures logs the type and stops it there.
        return internal_error().response()

    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_error)

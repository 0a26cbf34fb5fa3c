"""The RAG management endpoints. Thin: reads go to the registry and the manager's status, commands go
through :class:`~runiq.rag.RagIngestionManager` only (it is the conflict authority)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, status

from runiq.errors import translated
from runiq.rag import (
    IndexDefinition,
    IndexNotFoundError,
    IndexRegistry,
    IngestionConflictError,
    IngestionUnavailableError,
    NoActiveIngestionError,
    RagIngestionManager,
    RagIngestionReason,
)
from runiq_dashboard import projection
from runiq_dashboard.dto import (
    ProblemDto,
    RagIndexDetailDto,
    RagIndexListItemDto,
    RagIndexRuntimeStatusDto,
    RagOperationDto,
)
from runiq_dashboard.problems import (
    Problem,
    ProblemError,
    active_operation_conflict,
    index_not_found,
    ingestion_unavailable,
    no_active_operation,
)

__all__ = ["rag_router"]

Problems = Mapping[type[Exception], Callable[[], Problem]]


def _problem(description: str) -> dict[str, Any]:
    return {"model": ProblemDto, "description": description}


_DENIED: dict[int | str, dict[str, Any]] = {
    401: _problem("No valid credentials were presented."),
    403: _problem("The caller may not use this endpoint."),
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {**_DENIED, 404: _problem("The RAG index is not registered.")}


def rag_router(registry: IndexRegistry, manager: RagIngestionManager) -> APIRouter:
    router = APIRouter(prefix="/rag", tags=["rag"])

    def definition(index_name: str) -> IndexDefinition:
        # Ordinal, case-sensitive match on the decoded path segment.
        if index_name not in registry:
            raise ProblemError(index_not_found())
        return registry.get(index_name)

    @router.get("/indexes", response_model=list[RagIndexListItemDto], responses=_DENIED)
    async def list_indexes() -> list[RagIndexListItemDto]:
        """Every registered index, in registration order, with readiness and current/last operation."""
        return [projection.list_item(d, manager.status(d.name)) for d in registry]

    @router.get("/indexes/{index_name}", response_model=RagIndexDetailDto, responses=_NOT_FOUND)
    async def get_index(index_name: str) -> RagIndexDetailDto:
        """Safe display metadata and runtime status of one index."""
        found = definition(index_name)
        return projection.detail(found, manager.status(found.name))

    @router.get("/indexes/{index_name}/status", response_model=RagIndexRuntimeStatusDto, responses=_NOT_FOUND)
    async def get_status(index_name: str) -> RagIndexRuntimeStatusDto:
        """Readiness, active and last operation, progress and the last failure (fixed text)."""
        found = definition(index_name)
        return projection.runtime_status(manager.status(found.name))

    @router.post(
        "/indexes/{index_name}/ingestion/start",
        response_model=RagOperationDto,
        status_code=status.HTTP_202_ACCEPTED,
        responses={
            **_NOT_FOUND,
            409: _problem("The index already has an active ingestion operation (returned as activeOperation)."),
            503: _problem("The ingestion runtime is not running (the host is stopping or stopped)."),
        },
    )
    async def start_ingestion(index_name: str) -> RagOperationDto:
        """Start a manual run (any strategy allows one) and return it without waiting for it to finish."""
        return await _start(manager, definition(index_name).name)

    @router.post(
        "/indexes/{index_name}/ingestion/cancel",
        response_model=RagOperationDto,
        responses={**_NOT_FOUND, 409: _problem("The index has no active ingestion operation.")},
    )
    async def cancel_ingestion(index_name: str) -> RagOperationDto:
        """Cancel the active run and return its terminal operation (normally state 'cancelled')."""
        return await _cancel(manager, definition(index_name).name)

    return router


async def _start(manager: RagIngestionManager, index_name: str) -> RagOperationDto:
    def problem(exc: Exception) -> Exception:
        if isinstance(exc, IngestionConflictError):  # the manager is the conflict authority
            active = manager.status(index_name).active_operation
            return ProblemError(active_operation_conflict(projection.operation(active) if active else None))
        # IngestionUnavailableError: the manager refuses new runs once the host is stopping.
        return _problem_for(
            exc, {IndexNotFoundError: index_not_found, IngestionUnavailableError: ingestion_unavailable}
        )

    started = await translated(lambda: manager.start(index_name, RagIngestionReason.MANUAL), problem)
    return projection.operation(started)


async def _cancel(manager: RagIngestionManager, index_name: str) -> RagOperationDto:
    problems: Problems = {NoActiveIngestionError: no_active_operation, IndexNotFoundError: index_not_found}
    finished = await translated(lambda: manager.cancel(index_name), lambda exc: _problem_for(exc, problems))
    return projection.operation(finished)


def _problem_for(exc: Exception, problems: Problems) -> Exception:
    """The manager's refusal as a ProblemError (raised outside ``except`` by ``translated``, so it
    chains nothing); any other exception passes through unchanged."""
    for kind, problem in problems.items():
        if isinstance(exc, kind):
            return ProblemError(problem())
    return exc

"""The RAG management endpoints. Thin: reads go to the registry, the manager and the store; commands go
through :class:`~runiq.rag.RagIngestionManager` only (it is the conflict authority)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, Query, Request, status

from runiq.errors import (
    IndexNotFoundError,
    IngestionConflictError,
    IngestionUnavailableError,
    NoActiveIngestionError,
    RagError,
    translated,
)
from runiq.rag import IndexDefinition, RagIndexStatus, RagIngestionManager, RagIngestionOperation, RagIngestionReason
from runiq_dashboard import projection
from runiq_dashboard.access import granted_roles
from runiq_dashboard.context import RagServices
from runiq_dashboard.dto import (
    ProblemDto,
    RagIndexDetailDto,
    RagIndexListItemDto,
    RagIndexRuntimeStatusDto,
    RagOperationDto,
    RagRunDto,
    RagRunFailuresDto,
    RagStoreDto,
)
from runiq_dashboard.options import DashboardRole
from runiq_dashboard.problems import (
    Problem,
    ProblemError,
    active_operation_conflict,
    index_not_found,
    ingestion_unavailable,
    no_active_operation,
    run_not_found,
    store_unavailable,
)
from runiq_dashboard.query_route import query_router
from runiq_dashboard.store_overview import store_overview

__all__ = ["MAX_RUNS", "problem_response", "rag_router"]

MAX_RUNS = 100  # the most finished runs RagIngestionManager.history returns

Problems = Mapping[type[Exception], Callable[[], Problem]]


def problem_response(description: str) -> dict[str, Any]:
    return {"model": ProblemDto, "description": description}


_DENIED: dict[int | str, dict[str, Any]] = {
    401: problem_response("No valid credentials were presented."),
    403: problem_response("The caller may not use this endpoint."),
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {**_DENIED, 404: problem_response("The RAG index is not registered.")}
_STORE: dict[int | str, dict[str, Any]] = {**_NOT_FOUND, 503: problem_response("The index's store could not be read.")}


def rag_router(rag: RagServices) -> APIRouter:
    router = APIRouter(prefix="/rag", tags=["rag"])
    registry, manager, clock = rag.registry, rag.manager, rag.clock

    def definition(index_name: str) -> IndexDefinition:
        # Ordinal, case-sensitive match on the decoded path segment.
        if index_name not in registry:
            raise ProblemError(index_not_found())
        return registry.get(index_name)

    @router.get("/indexes", response_model=list[RagIndexListItemDto], responses=_DENIED)
    async def list_indexes() -> list[RagIndexListItemDto]:
        """Every registered index, in registration order, with readiness and current/last operation."""
        return [projection.list_item(d, manager.status(d.name), clock) for d in registry]

    @router.get("/indexes/{index_name}", response_model=RagIndexDetailDto, responses=_NOT_FOUND)
    async def get_index(index_name: str) -> RagIndexDetailDto:
        """Safe display metadata and runtime status of one index (seeded from the store's run history)."""
        found = definition(index_name)
        return projection.detail(found, await _inspect(manager, found.name), clock)

    @router.get("/indexes/{index_name}/status", response_model=RagIndexRuntimeStatusDto, responses=_NOT_FOUND)
    async def get_status(index_name: str) -> RagIndexRuntimeStatusDto:
        """Readiness, active and last operation, progress and the last failure (fixed text)."""
        found = definition(index_name)
        return projection.runtime_status(await _inspect(manager, found.name), clock)

    @router.get("/indexes/{index_name}/runs", response_model=list[RagRunDto], responses=_STORE)
    async def list_runs(index_name: str, limit: int = Query(default=20, ge=1, le=MAX_RUNS)) -> list[RagRunDto]:
        """The active run, if any, then up to ``limit`` finished runs, newest first."""
        return [projection.run(op, clock) for op in await _runs(manager, definition(index_name).name, limit)]

    @router.get(
        "/indexes/{index_name}/runs/{operation_id}/failures",
        response_model=RagRunFailuresDto,
        responses={**_STORE, 404: problem_response("The index or the run (among the recent ones) does not exist.")},
    )
    async def get_run_failures(index_name: str, operation_id: str, request: Request) -> RagRunFailuresDto:
        """A run's failed documents (the first 1,000) with their codes; document ids for the query role."""
        runs = await _runs(manager, definition(index_name).name, MAX_RUNS)
        found = next((op for op in runs if op.operation_id == operation_id), None)
        if found is None:
            raise ProblemError(run_not_found())
        with_ids = DashboardRole.QUERY in await granted_roles(rag.policy, request, rag.options)
        return projection.failed_documents(found, with_document_ids=with_ids)

    @router.get("/indexes/{index_name}/store", response_model=RagStoreDto, responses=_NOT_FOUND)
    async def get_store(index_name: str) -> RagStoreDto:
        """Store health (a fixed reason code), chunks and documents stored."""
        return await store_overview(rag.runtime, manager, definition(index_name).name)

    @router.post(
        "/indexes/{index_name}/ingestion/start",
        response_model=RagOperationDto,
        status_code=status.HTTP_202_ACCEPTED,
        responses={
            **_NOT_FOUND,
            409: problem_response("The index already has an active ingestion operation (returned as activeOperation)."),
            503: problem_response("The ingestion runtime is not running (the host is stopping or stopped)."),
        },
    )
    async def start_ingestion(index_name: str) -> RagOperationDto:
        """Start a manual run (any strategy allows one) and return it without waiting for it to finish."""
        return projection.operation(await _start(manager, definition(index_name).name), clock)

    @router.post(
        "/indexes/{index_name}/ingestion/cancel",
        response_model=RagOperationDto,
        responses={**_NOT_FOUND, 409: problem_response("The index has no active ingestion operation.")},
    )
    async def cancel_ingestion(index_name: str) -> RagOperationDto:
        """Cancel the active run and return its terminal operation (normally state 'cancelled')."""
        return projection.operation(await _cancel(manager, definition(index_name).name), clock)

    router.include_router(query_router(rag, definition, _DENIED))
    return router


async def _inspect(manager: RagIngestionManager, index_name: str) -> RagIndexStatus:
    """The status seeded from the store's history; this process's own when the store cannot be read
    (the store endpoint reports that)."""
    try:
        return await manager.inspect(index_name)
    except (RagError, RuntimeError):  # RuntimeError: the host is stopping
        return manager.status(index_name)


async def _runs(manager: RagIngestionManager, index_name: str, limit: int) -> list[RagIngestionOperation]:
    failed = False
    try:
        finished = await manager.history(index_name, limit)
    except (RagError, RuntimeError):
        failed, finished = True, []
    if failed:  # raised outside the except block: the store's exception is not kept as context
        raise ProblemError(store_unavailable())
    active = manager.status(index_name).active_operation
    if active is None:
        return finished
    return [active, *(op for op in finished if op.operation_id != active.operation_id)]


async def _start(manager: RagIngestionManager, index_name: str) -> RagIngestionOperation:
    def problem(exc: Exception) -> Exception:
        if isinstance(exc, IngestionConflictError):  # the manager is the conflict authority
            active = manager.status(index_name).active_operation
            return ProblemError(active_operation_conflict(projection.operation(active) if active else None))
        # IngestionUnavailableError: the manager refuses new runs once the host is stopping.
        return _problem_for(
            exc, {IndexNotFoundError: index_not_found, IngestionUnavailableError: ingestion_unavailable}
        )

    return await translated(lambda: manager.start(index_name, RagIngestionReason.MANUAL), problem)


async def _cancel(manager: RagIngestionManager, index_name: str) -> RagIngestionOperation:
    problems: Problems = {NoActiveIngestionError: no_active_operation, IndexNotFoundError: index_not_found}
    return await translated(lambda: manager.cancel(index_name), lambda exc: _problem_for(exc, problems))


def _problem_for(exc: Exception, problems: Problems) -> Exception:
    """The manager's refusal as a ProblemError (raised outside ``except`` by ``translated``, so it
    chains nothing); any other exception passes through unchanged."""
    for kind, problem in problems.items():
        if isinstance(exc, kind):
            return ProblemError(problem())
    return exc

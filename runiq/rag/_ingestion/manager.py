"""``RagIngestionManager``: the one authority that starts, inspects and cancels ingestion runs.

One operation per index at a time: a second start while one is active (whatever triggered either)
is an :class:`IngestionConflictError`, never a second run. Runtime state is kept in memory; finished
operations are also recorded by a store that offers :class:`IngestionHistory` (PostgreSQL), so
:meth:`RagIngestionManager.history` and :meth:`RagIngestionManager.inspect` see them after a restart
and from other replicas. With the in-memory store they reset with the process, like the index itself.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from runiq.logging import get_logger
from runiq.rag._documents import RagDocument
from runiq.rag._errors import IngestionConflictError, IngestionUnavailableError, NoActiveIngestionError
from runiq.rag._ingestion.operation import (
    RagDocumentChanges,
    RagIndexReadiness,
    RagIndexStatus,
    RagIngestionFailure,
    RagIngestionOperation,
    RagIngestionPhase,
    RagIngestionReason,
    RagIngestionState,
    RunOutcome,
)
from runiq.rag._ingestion.pipeline import IngestionPipeline, ProgressTracker
from runiq.rag._ingestion.shared import SharedRunWorker
from runiq.rag._observability.events import IngestionEvent, ObservabilitySink, emit
from runiq.rag._observability.identity import identity_hash
from runiq.rag._observability.otel import TelemetrySpan, ingestion_span, record_metrics
from runiq.rag._runtime import IndexResources, IndexRuntime
from runiq.rag._stores.base import HealthCheck, IngestionHistory, StoreHealth
from runiq.rag._stores.claims import SharedRun, WorkClaims

__all__ = ["HISTORY_LENGTH", "RagIngestionManager"]

HISTORY_LENGTH = 20  # finished operations kept per index in memory (a durable store may keep more)
_RECORD_TIMEOUT_SECONDS = 10.0

log = get_logger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class _Run:
    operation: RagIngestionOperation
    tracker: ProgressTracker
    task: asyncio.Task[RagIngestionOperation] | None = None
    shared: SharedRunWorker | None = None  # this process's part in a run shared through the store

    def snapshot(self) -> RagIngestionOperation:
        return replace(
            self.operation,
            progress=self.tracker.progress,
            last_failure=self.tracker.last_failure,
            failures=tuple(self.tracker.failures),
            phase=self.tracker.phase,
        )


@dataclass(slots=True)
class _IndexState:
    active: _Run | None = None
    last: RagIngestionOperation | None = None
    usable: bool = False
    updated_at: datetime | None = None
    history: deque[RagIngestionOperation] = field(default_factory=lambda: deque(maxlen=HISTORY_LENGTH))
    writes: asyncio.Lock = field(default_factory=asyncio.Lock)  # a run or one document API call at a time


class RagIngestionManager:
    def __init__(self, runtime: IndexRuntime, *, sinks: Sequence[ObservabilitySink] = ()) -> None:
        self._runtime = runtime
        self._sinks = tuple(sinks)
        self._states = {name: _IndexState(updated_at=_now()) for name in runtime.registry.names}
        self._closed = False

    def _state(self, index_name: str) -> _IndexState:
        self._runtime.registry.get(index_name)  # IndexNotFoundError for unknown names
        return self._states[index_name]

    async def start(
        self, index_name: str, reason: RagIngestionReason = RagIngestionReason.MANUAL
    ) -> RagIngestionOperation:
        """Start a run and return its RUNNING snapshot. Use :meth:`wait` for the terminal one."""
        state = self._state(index_name)
        if self._closed:
            raise IngestionUnavailableError(index_name)
        if state.active is not None:
            raise IngestionConflictError(index_name, state.active.operation.operation_id)
        operation = RagIngestionOperation(
            operation_id=str(uuid.uuid4()),
            index_name=index_name,
            reason=reason,
            state=RagIngestionState.RUNNING,
            started_at=_now(),
            phase=RagIngestionPhase.OPENING,
        )
        run = _Run(operation=operation, tracker=ProgressTracker())
        state.active = run
        state.updated_at = operation.started_at
        run.task = asyncio.create_task(self._execute(state, run), name=f"runiq-ingestion-{index_name}")
        log.info("ingestion.started", index=index_name, operation=operation.operation_id, reason=reason.value)
        return run.snapshot()

    async def run(
        self, index_name: str, reason: RagIngestionReason = RagIngestionReason.MANUAL
    ) -> RagIngestionOperation:
        """Start and wait: returns the terminal operation."""
        await self.start(index_name, reason)
        return await self.wait(index_name)

    async def wait(self, index_name: str) -> RagIngestionOperation:
        """The terminal operation of the active run, or the last one when nothing is running."""
        state = self._state(index_name)
        if state.active is not None and state.active.task is not None:
            return await self._await(state, state.active)
        if state.last is None:
            raise NoActiveIngestionError(index_name)
        return state.last

    async def cancel(self, index_name: str) -> RagIngestionOperation:
        """Cancel the active run and return its terminal (CANCELLED, or already finished) snapshot."""
        state = self._state(index_name)
        run = state.active
        if run is None or run.task is None:
            raise NoActiveIngestionError(index_name)
        if run.operation.state is RagIngestionState.RUNNING:
            run.operation = replace(run.operation, state=RagIngestionState.CANCELLING)
            if run.shared is not None:
                run.shared.cancel_everywhere()  # a host stopping only leaves a shared run; a cancel ends it
            run.task.cancel()
        return await self._await(state, run)

    async def _await(self, state: _IndexState, run: _Run) -> RagIngestionOperation:
        assert run.task is not None
        try:
            return await asyncio.shield(run.task)
        except asyncio.CancelledError:
            # A task cancelled before its first step never ran its handler: finish it here.
            if run.task.cancelled():
                return self._finish(state, run, RagIngestionState.CANCELLED)
            raise

    def status(self, index_name: str) -> RagIndexStatus:
        state = self._state(index_name)
        active = state.active.snapshot() if state.active is not None else None
        return RagIndexStatus(
            index_name=index_name,
            readiness=_readiness(state),
            active_operation=active,
            last_operation=state.last,
            updated_at=state.updated_at or _now(),
        )

    async def ingest_documents(self, index_name: str, documents: Iterable[RagDocument]) -> RagDocumentChanges:
        """Add or replace documents of the index now, like a run does for its sources: incremental by
        content hash (an unchanged document is skipped), each document atomic, failures per document.

        Documents that no source delivers are removed again by the next full run (sources are the
        truth). While a run is active this is an :class:`IngestionConflictError`; document calls on
        one index run one at a time.
        """
        batch = list(documents)
        return await self._document_call(index_name, lambda pipeline: pipeline.ingest(batch))

    async def delete_documents(self, index_name: str, document_ids: Iterable[str]) -> RagDocumentChanges:
        """Remove documents (and their chunks) now; ``progress.deleted_documents`` says how many existed."""
        ids = list(dict.fromkeys(document_ids))
        return await self._document_call(index_name, lambda pipeline: pipeline.delete(ids))

    async def _document_call(
        self, index_name: str, call: Callable[[IngestionPipeline], Awaitable[None]]
    ) -> RagDocumentChanges:
        state = self._state(index_name)
        if self._closed:
            raise IngestionUnavailableError(index_name)
        if state.active is not None:
            raise IngestionConflictError(index_name, state.active.operation.operation_id)
        tracker = ProgressTracker()
        async with state.writes:
            if state.active is not None:
                raise IngestionConflictError(index_name, state.active.operation.operation_id)
            resources = await self._runtime.get(index_name)
            await call(IngestionPipeline(resources, tracker))
        return RagDocumentChanges(progress=tracker.progress, failures=tuple(tracker.failures))

    async def history(self, index_name: str, limit: int = HISTORY_LENGTH) -> list[RagIngestionOperation]:
        """The newest finished operations, newest first: from the store when it keeps them (so runs of
        other processes and from before a restart are included), else from this process."""
        state = self._state(index_name)
        limit = max(1, min(int(limit), 100))
        resources = await self._runtime.get(index_name)
        if isinstance(resources.store, IngestionHistory):
            return list(await resources.store.recent_operations(index_name, limit=limit))
        return list(state.history)[::-1][:limit]

    async def inspect(self, index_name: str) -> RagIndexStatus:
        """:meth:`status`, seeded from the store's history when this process has not finished a run yet."""
        state = self._state(index_name)
        if state.last is None:
            resources = await self._runtime.get(index_name)
            if isinstance(resources.store, IngestionHistory):
                recorded = await resources.store.recent_operations(index_name, limit=HISTORY_LENGTH)
                if recorded and state.last is None:
                    state.last = recorded[0]
                    state.usable = any(_leaves_content(op.state) for op in recorded)
        return self.status(index_name)

    async def health(self, index_name: str) -> StoreHealth:
        """The index's store health; a store without a probe is healthy once it opens."""
        self._state(index_name)
        try:
            resources = await self._runtime.get(index_name)
        except Exception:
            return StoreHealth(healthy=False, reason="unavailable")
        if isinstance(resources.store, HealthCheck):
            return await resources.store.health()
        return StoreHealth(healthy=True)

    async def aclose(self) -> None:
        """Cancel every active run and wait for it (host shutdown)."""
        self._closed = True
        runs = [s.active for s in self._states.values() if s.active is not None]
        for run in runs:
            if run.task is not None and run.operation.state is RagIngestionState.RUNNING:
                run.operation = replace(run.operation, state=RagIngestionState.CANCELLING)
                run.task.cancel()
        await asyncio.gather(*(run.task for run in runs if run.task is not None), return_exceptions=True)
        for state in self._states.values():
            if state.active is not None and state.active.task is not None and state.active.task.cancelled():
                self._finish(state, state.active, RagIngestionState.CANCELLED)

    async def _execute(self, state: _IndexState, run: _Run) -> RagIngestionOperation:
        with ingestion_span(run.operation.index_name, run.operation.operation_id) as span:
            return await self._run(state, run, span)

    async def _run(self, state: _IndexState, run: _Run, span: TelemetrySpan) -> RagIngestionOperation:
        index_name = run.operation.index_name
        terminal: RagIngestionState
        try:
            resources = await self._runtime.get(index_name)
            async with state.writes:  # waits for a document API call in progress
                run.shared = self._shared_worker(resources, run)
                if run.shared is not None:
                    terminal = await run.shared.run()
                else:
                    await IngestionPipeline(resources, run.tracker).run()
                    terminal = _terminal_state(run.tracker)
        except asyncio.CancelledError:
            terminal = RagIngestionState.CANCELLED
        except Exception as exc:
            log.warning(
                "ingestion.failed", index=index_name, operation=run.operation.operation_id, error=type(exc).__name__
            )
            span.fail(type(exc).__name__)
            run.tracker.last_failure = RagIngestionFailure(code="ingestion_failed", timestamp=_now())
            terminal = RagIngestionState.FAILED
        finished = self._finish(state, run, terminal)
        span.describe(_event(finished))
        if terminal is RagIngestionState.FAILED and finished.last_failure is not None:
            span.fail(finished.last_failure.code)  # every document failed (an exception above is kept instead)
        if run.shared is None or run.shared.reports_outcome:  # a worker that left records nothing
            await asyncio.shield(self._record(finished))  # a cancel during recording still records
        return finished

    def _shared_worker(self, resources: IndexResources, run: _Run) -> SharedRunWorker | None:
        """The run's part in a shared run when the index opts in and its store offers work claims."""
        options = resources.definition.ingestion.shared
        if options is None:
            return None
        if not isinstance(resources.store, WorkClaims):
            index, kind = run.operation.index_name, resources.store.store_kind
            log.warning("ingestion.shared_runs_unsupported", index=index, store=kind)
            return None

        def joined(shared: SharedRun) -> None:  # every worker reports the shared run under its id
            run.operation = replace(
                run.operation,
                operation_id=shared.operation_id,
                reason=RagIngestionReason(shared.reason),
                started_at=shared.started_at,
            )

        return SharedRunWorker(
            resources, resources.store, options, run.tracker, operation=run.operation, on_joined=joined
        )

    async def _record(self, operation: RagIngestionOperation) -> None:
        """Persist a finished operation where the store keeps history; a failure here never fails the run."""
        try:
            resources = self._runtime.opened(operation.index_name)  # a run that could not open them records nothing
            if resources is not None and isinstance(resources.store, IngestionHistory):
                async with asyncio.timeout(_RECORD_TIMEOUT_SECONDS):
                    await resources.store.record_operation(operation)
        except Exception as exc:
            log.warning("ingestion.record_failed", index=operation.index_name, error=type(exc).__name__)

    def _finish(self, state: _IndexState, run: _Run, terminal: RagIngestionState) -> RagIngestionOperation:
        if state.active is not run and state.last is not None and state.last.operation_id == run.operation.operation_id:
            return state.last  # already finished
        run.tracker.phase = RagIngestionPhase.FINISHED
        finished = replace(run.snapshot(), state=terminal, completed_at=_now())
        state.last = finished
        state.history.append(finished)
        state.active = None
        state.updated_at = finished.completed_at
        if terminal in (RagIngestionState.COMPLETED, RagIngestionState.PARTIALLY_COMPLETED):
            state.usable = True
        event = _event(finished)
        emit(event, self._sinks)
        record_metrics(event)
        return finished


def _event(finished: RagIngestionOperation) -> IngestionEvent:
    p = finished.progress
    last = finished.last_failure
    return IngestionEvent(
        event="ingestion.finished",
        index_name=finished.index_name,
        operation_id=finished.operation_id,
        reason=finished.reason.value,
        state=finished.state.value,
        duration_ms=round((finished.duration_seconds or 0.0) * 1000, 3),
        discovered=p.discovered_documents,
        added=p.added_documents,
        updated=p.updated_documents,
        skipped=p.skipped_documents,
        deleted=p.deleted_documents,
        failed=p.failed_documents,
        chunks=p.produced_chunks,
        failure_code=last.code if last else None,
        failed_document=identity_hash(last.document_id) if last and last.document_id is not None else None,
        skipped_files=p.skipped_files,
    )


def _terminal_state(tracker: ProgressTracker) -> RagIngestionState:
    return RunOutcome(progress=tracker.progress).state


def _leaves_content(state: RagIngestionState) -> bool:
    return state in (RagIngestionState.COMPLETED, RagIngestionState.PARTIALLY_COMPLETED)


def _readiness(state: _IndexState) -> RagIndexReadiness:
    if state.active is not None:
        return RagIndexReadiness.READY if state.usable else RagIndexReadiness.INITIALIZING
    last = state.last
    if last is None:
        return RagIndexReadiness.NOT_INITIALIZED
    if last.state is RagIngestionState.COMPLETED:
        return RagIndexReadiness.READY
    if last.state is RagIngestionState.PARTIALLY_COMPLETED:
        return RagIndexReadiness.DEGRADED
    if last.state is RagIngestionState.FAILED:
        return RagIndexReadiness.DEGRADED if state.usable else RagIndexReadiness.FAILED
    return RagIndexReadiness.READY if state.usable else RagIndexReadiness.NOT_INITIALIZED

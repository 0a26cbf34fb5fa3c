"""One process's part in a shared ingestion run (``configure_ingestion(... .shared_runs())``).

Every process that runs the index joins the same run through the store's :class:`WorkClaims`. A
worker claims a bucket, streams the whole source and ingests only that bucket's documents (the
pipeline's document filter), renewing the bucket's lease meanwhile, then records what the pass did
and the digests of the ids it saw, and claims the next. A worker that stops renewing (killed, hung,
cut off) loses its bucket when the lease expires and another worker redoes it: writes are
incremental by content hash and atomic per document, so what the first one wrote is skipped, never
doubled. When every bucket is done, the worker that claims the finish part (usually the one that
completed the last bucket) deletes the stored documents no bucket saw and ends the run with the sum
of the buckets' counters. Workers with nothing left to claim wait for the run to end and report it:
every process's operation is the shared run, with its id and its totals.

A failure of the ingestion itself (a source that fails, a store error) ends the shared run as failed,
as it would fail a single process's run, and nothing is deleted. ``RagIngestionManager.cancel`` ends
it as cancelled everywhere; a host stopping only leaves it: the worker gives its bucket back and the
others (or the next process to join) carry on.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime

from runiq.logging import get_logger
from runiq.rag._ingestion.buckets import BucketFilter, SeenDigests
from runiq.rag._ingestion.operation import (
    MAX_REPORTED_FAILURES,
    RagIngestionFailure,
    RagIngestionOperation,
    RagIngestionProgress,
    RagIngestionReason,
    RagIngestionState,
    RunOutcome,
)
from runiq.rag._ingestion.pipeline import IngestionPipeline, ProgressTracker
from runiq.rag._ingestion.strategies import SharedRunOptions
from runiq.rag._runtime import IndexResources
from runiq.rag._stores.claims import SharedRun, WorkClaims

__all__ = ["SharedRunWorker", "worker_name"]

log = get_logger(__name__)

_ID_PAGE = 1000  # stored ids read (and unseen ones deleted) per call by the finisher
_LEAVE_TIMEOUT_SECONDS = 5.0
_RUNNING = RagIngestionState.RUNNING.value
_STARTUP_REASONS = (RagIngestionReason.STARTUP, RagIngestionReason.BACKGROUND_STARTUP)


def worker_name() -> str:
    """Who holds a claim, for an operator reading the claims table: host, process and a random suffix."""
    return f"{socket.gethostname()[:64]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class _ClaimLost(Exception):
    """The part's lease was taken over (or the run ended) while this worker was still on it."""


class SharedRunWorker:
    def __init__(
        self,
        resources: IndexResources,
        claims: WorkClaims,
        options: SharedRunOptions,
        tracker: ProgressTracker,
        *,
        operation: RagIngestionOperation,
        on_joined: Callable[[SharedRun], None],
    ) -> None:
        self._resources = resources
        self._claims = claims
        self._options = options
        self._tracker = tracker  # this worker's passes while the run goes on; the run's totals at its end
        self._operation = operation
        self._on_joined = on_joined
        self._holder = worker_name()
        self._name = resources.definition.name
        self._held: int | None = None
        self._everywhere = False
        self._joined = False
        self._run_ended = False  # known to have ended: this worker's outcome is the run's
        self._poll = min(0.25, options.lease_seconds / 4)  # how soon an idle worker sees a part free up or the end

    def cancel_everywhere(self) -> None:
        """Make the coming cancellation end the shared run for every worker, not only leave it."""
        self._everywhere = True

    @property
    def reports_outcome(self) -> bool:
        """False when this worker left a run that goes on without it: its outcome is not the run's."""
        return not self._joined or self._run_ended

    async def run(self) -> RagIngestionState:
        """Join, work until the shared run ends, and return its terminal state (the tracker holds its totals)."""
        await self._resources.store.ensure_index(self._resources.spec)
        key = self._options.deployment if self._operation.reason in _STARTUP_REASONS else None
        shared = await self._claims.join_run(
            self._name,
            operation_id=self._operation.operation_id,
            reason=self._operation.reason.value,
            parts=self._options.buckets,
            key=None if key is None else f"deployment:{key}",
        )
        self._joined = True
        self._on_joined(shared)
        try:
            shared = await self._work(shared)
        except asyncio.CancelledError:
            await asyncio.shield(self._leave(shared))
            raise
        except BaseException:
            await asyncio.shield(self._give_back(shared))
            raise
        self._run_ended = True
        outcome = RunOutcome.from_record(shared.result or {})
        self._tracker.adopt(outcome.progress)
        self._tracker.failures = list(outcome.failures)
        self._tracker.last_failure = outcome.last_failure
        return RagIngestionState(shared.state)

    async def _work(self, shared: SharedRun) -> SharedRun:
        lease = self._options.lease_seconds
        while shared.state == _RUNNING:
            part = await self._claims.claim_part(shared, holder=self._holder, lease_seconds=lease)
            if part is None:
                await asyncio.sleep(self._poll)
            else:
                self._held = part
                log.debug("ingestion.shared_part_claimed", index=self._name, part=part, parts=shared.parts)
                if part == shared.finish_part:
                    await self._ingesting(shared, self._finish(shared, part))
                else:
                    await self._ingesting(shared, self._pass(shared, part))
                self._held = None
            shared = await self._claims.refresh_run(shared)
        return shared

    async def _ingesting(self, shared: SharedRun, work: Awaitable[None]) -> None:
        """Run a part's work; a failure of the ingestion itself ends the shared run as failed."""
        try:
            await work
        except _ClaimLost:
            log.info("ingestion.shared_part_lost", index=self._name, part=self._held)
        except Exception as exc:
            failure = RagIngestionFailure(code="ingestion_failed", timestamp=datetime.now(UTC))
            outcome = replace(_outcome(self._tracker), last_failure=failure)
            await asyncio.shield(self._end(shared, RagIngestionState.FAILED, outcome))
            log.warning("ingestion.shared_run_failed", index=self._name, error=type(exc).__name__)
            raise

    async def _pass(self, shared: SharedRun, part: int) -> None:
        """One bucket: the whole source streamed, only this bucket's documents ingested, then recorded."""
        bucket = BucketFilter(part, shared.parts)
        tracker = ProgressTracker()
        await self._while_held(shared, part, IngestionPipeline(self._resources, tracker).run(bucket))
        if not await self._claims.complete_part(
            shared, part, holder=self._holder, record=_outcome(tracker).record(), seen=bucket.digests()
        ):
            raise _ClaimLost
        self._tracker.add(**{name: getattr(tracker.progress, name) for name in _COUNTERS})
        self._tracker.failures.extend(tracker.failures[: MAX_REPORTED_FAILURES - len(self._tracker.failures)])
        self._tracker.last_failure = tracker.last_failure or self._tracker.last_failure

    async def _finish(self, shared: SharedRun, part: int) -> None:
        """Every bucket done: delete what no bucket saw, end the run with the buckets' totals."""
        results = await self._claims.part_results(shared)
        if sorted(r.part for r in results) != list(range(shared.parts)):
            await self._claims.release_part(shared, part, holder=self._holder)  # not every bucket is in yet
            return
        seen = SeenDigests(r.seen for r in results)
        deleted: list[int] = []
        await self._while_held(shared, part, self._delete_unseen(seen, deleted))
        total = RunOutcome.combined(RunOutcome.from_record(r.record) for r in results)
        total = replace(total, progress=replace(total.progress, deleted_documents=sum(deleted)))
        await self._end(shared, total.state, total)

    async def _delete_unseen(self, seen: SeenDigests, deleted: list[int]) -> None:
        store = self._resources.store
        after: str | None = None
        while page := list(await store.document_id_page(self._name, after=after, limit=_ID_PAGE)):
            after = page[-1]
            if stale := seen.unseen(page):
                deleted.append(await store.delete_documents(self._name, stale))

    async def _while_held(self, shared: SharedRun, part: int, work: Awaitable[None]) -> None:
        """Run ``work`` while renewing the part's lease; raise :class:`_ClaimLost` (work cancelled) if lost."""
        task = asyncio.ensure_future(work)
        beat = asyncio.create_task(self._renew_until_lost(shared, part))
        try:
            await asyncio.wait((task, beat), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (task, beat):
                if not pending.done():
                    pending.cancel()
            await asyncio.gather(task, beat, return_exceptions=True)
        if task.cancelled():
            raise _ClaimLost
        task.result()  # the work's own error, if it failed

    async def _renew_until_lost(self, shared: SharedRun, part: int) -> None:
        """Renew every third of the lease; return when the part is lost or cannot be renewed in time."""
        lease = self._options.lease_seconds
        loop = asyncio.get_running_loop()
        expires = loop.time() + lease
        while True:
            await asyncio.sleep(lease / 3)
            try:
                if not await self._claims.renew_part(shared, part, holder=self._holder, lease_seconds=lease):
                    return
                expires = loop.time() + lease
            except Exception as exc:  # the store is unreachable: keep trying while the lease may still hold
                log.warning("ingestion.shared_renew_failed", index=self._name, part=part, error=type(exc).__name__)
                if loop.time() + lease / 3 >= expires:
                    return

    async def _end(self, shared: SharedRun, state: RagIngestionState, outcome: RunOutcome) -> None:
        try:
            ended = await self._claims.end_run(shared, state=state.value, record=outcome.record())
        except Exception as exc:
            log.warning("ingestion.shared_end_failed", index=self._name, error=type(exc).__name__)
            return
        self._run_ended = True  # by this call or an earlier one
        if ended:
            log.info("ingestion.shared_run_ended", index=self._name, state=state.value, parts=shared.parts)

    async def _leave(self, shared: SharedRun) -> None:
        """A cancellation: end the run everywhere when asked to, else give the held part back."""
        if self._everywhere:
            async with asyncio.timeout(_LEAVE_TIMEOUT_SECONDS):
                await self._end(shared, RagIngestionState.CANCELLED, _outcome(self._tracker))
            return
        await self._give_back(shared)
        try:
            current = await asyncio.wait_for(self._claims.refresh_run(shared), _LEAVE_TIMEOUT_SECONDS)
        except Exception:  # the run's fate is unknown: this worker only left it
            return
        self._run_ended = current.state != _RUNNING

    async def _give_back(self, shared: SharedRun) -> None:
        part, self._held = self._held, None
        if part is None:
            return
        try:
            await asyncio.wait_for(self._claims.release_part(shared, part, holder=self._holder), _LEAVE_TIMEOUT_SECONDS)
        except Exception as exc:  # the lease expires on its own
            log.warning("ingestion.shared_release_failed", index=self._name, part=part, error=type(exc).__name__)


_COUNTERS = tuple(RagIngestionProgress.__dataclass_fields__)


def _outcome(tracker: ProgressTracker) -> RunOutcome:
    return RunOutcome(progress=tracker.progress, failures=tuple(tracker.failures), last_failure=tracker.last_failure)

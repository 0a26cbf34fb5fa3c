"""Ingestion operation snapshots, states and readiness. All immutable; the manager swaps snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "MAX_REPORTED_FAILURES",
    "RagDocumentChanges",
    "RagIndexReadiness",
    "RagIndexStatus",
    "RagIngestionFailure",
    "RagIngestionOperation",
    "RagIngestionPhase",
    "RagIngestionProgress",
    "RagIngestionReason",
    "RagIngestionState",
    "RagIngestionThroughput",
    "RunOutcome",
    "operation_from_record",
    "operation_record",
]

# A run reports at most this many failed documents (the first ones); the counters stay exact.
MAX_REPORTED_FAILURES = 1000


class RagIngestionState(StrEnum):
    RUNNING = "running"  # the pipeline is working; counters move
    CANCELLING = "cancelling"  # cancel was requested; the current document finishes or rolls back
    COMPLETED = "completed"  # every discovered document is stored at its new version or skipped
    PARTIALLY_COMPLETED = "partially_completed"  # some documents failed; the rest are stored
    FAILED = "failed"  # the run could not proceed, or every processed document failed
    CANCELLED = "cancelled"  # stopped on request; each document is at its old or its new version

    @property
    def is_terminal(self) -> bool:
        return self not in (RagIngestionState.RUNNING, RagIngestionState.CANCELLING)


class RagIngestionPhase(StrEnum):
    """What a run is doing now. Reading, chunking, embedding and writing overlap, so they are one phase."""

    OPENING = "opening"  # connecting to the store and loading the embedding model: no counter moves yet
    INGESTING = "ingesting"  # documents are read, chunked, embedded and written; the counters move
    DELETING = "deleting"  # every source was read to the end: stored documents none delivered are removed
    FINISHED = "finished"  # the run is over; its state says how it ended


class RagIngestionReason(StrEnum):
    MANUAL = "manual"
    STARTUP = "startup"
    BACKGROUND_STARTUP = "background_startup"
    SCHEDULED = "scheduled"


class RagIndexReadiness(StrEnum):
    NOT_INITIALIZED = "not_initialized"  # never ingested successfully in this process
    INITIALIZING = "initializing"  # first ingestion is running
    READY = "ready"  # the last run completed, or a usable run exists and one is active
    DEGRADED = "degraded"  # usable content exists but the last run had failures
    FAILED = "failed"  # no usable content and the last run failed


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIngestionProgress:
    """A run's counters. ``skipped_documents`` were unchanged since the last run (still stored);
    ``skipped_files`` are files a source passed over because no loader reads their format (never
    documents, never failures). ``expected_documents`` is the number of documents the sources hold, once known
    (a source that can count says so early; else it is known when every source was read; 0 until then).
    ``embedded_chunks`` moves as each embedding batch returns (a text embedded again after a failed
    batch counts again); ``produced_chunks`` and ``produced_embeddings`` count what was written."""

    discovered_documents: int = 0
    processed_documents: int = 0
    added_documents: int = 0
    updated_documents: int = 0
    skipped_documents: int = 0
    deleted_documents: int = 0
    failed_documents: int = 0
    produced_chunks: int = 0
    produced_embeddings: int = 0
    embedding_calls: int = 0
    skipped_files: int = 0
    expected_documents: int = 0
    embedded_chunks: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIngestionFailure:
    """A safe failure record: a stable code and identities, never an exception message."""

    code: str
    timestamp: datetime
    document_id: str | None = None
    source_kind: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIngestionOperation:
    operation_id: str
    index_name: str
    reason: RagIngestionReason
    state: RagIngestionState
    started_at: datetime
    completed_at: datetime | None = None
    progress: RagIngestionProgress = RagIngestionProgress()
    last_failure: RagIngestionFailure | None = None
    failures: tuple[RagIngestionFailure, ...] = ()  # the run's failed documents, at most MAX_REPORTED_FAILURES
    phase: RagIngestionPhase = RagIngestionPhase.FINISHED

    @property
    def duration_seconds(self) -> float | None:
        if self.completed_at is None:
            return None
        return (self.completed_at - self.started_at).total_seconds()

    def throughput(self, now: datetime | None = None) -> RagIngestionThroughput:
        """Documents and chunks per second since the start (until ``now``, or the end of a finished run)."""
        end = self.completed_at or now or datetime.now(UTC)
        seconds = max((end - self.started_at).total_seconds(), 1e-9)
        p = self.progress
        return RagIngestionThroughput(
            seconds=seconds,
            documents_per_second=p.processed_documents / seconds,
            chunks_per_second=p.produced_chunks / seconds,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIngestionThroughput:
    seconds: float  # since the run started
    documents_per_second: float
    chunks_per_second: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIndexStatus:
    """Readiness and operation state are separate: a READY index may have a FAILED last operation
    only through DEGRADED, and an active operation never hides usable content."""

    index_name: str
    readiness: RagIndexReadiness
    active_operation: RagIngestionOperation | None
    last_operation: RagIngestionOperation | None
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """What a run did: its counters and failure records (a run, a shared run's bucket, or the sum of them)."""

    progress: RagIngestionProgress = RagIngestionProgress()
    failures: tuple[RagIngestionFailure, ...] = ()
    last_failure: RagIngestionFailure | None = None

    @property
    def state(self) -> RagIngestionState:
        """The terminal state of a run that went to its end: some failures make it partial, all of them failed."""
        p = self.progress
        if p.failed_documents == 0:
            return RagIngestionState.COMPLETED
        if p.processed_documents == p.failed_documents:
            return RagIngestionState.FAILED
        return RagIngestionState.PARTIALLY_COMPLETED

    def record(self) -> dict[str, object]:
        """JSON-ready: counters and failure codes with document ids, never content."""
        return {
            "progress": {name: getattr(self.progress, name) for name in RagIngestionProgress.__dataclass_fields__},
            "failures": [_failure_record(f) for f in self.failures],
            "last_failure": _failure_record(self.last_failure) if self.last_failure else None,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RunOutcome:
        """The inverse of :meth:`record`. Unknown counters (a newer writer) are ignored, missing ones are zero."""
        counters = record.get("progress") or {}
        fields = RagIngestionProgress.__dataclass_fields__
        last = record.get("last_failure")
        return cls(
            progress=RagIngestionProgress(**{k: int(v) for k, v in counters.items() if k in fields}),
            failures=tuple(_failure_from(f) for f in (record.get("failures") or ())[:MAX_REPORTED_FAILURES]),
            last_failure=_failure_from(last) if last else None,
        )

    @classmethod
    def combined(cls, outcomes: Iterable[RunOutcome]) -> RunOutcome:
        """Counters summed, failures in order up to the reporting limit, the latest failure last."""
        totals: dict[str, int] = dict.fromkeys(RagIngestionProgress.__dataclass_fields__, 0)
        failures: list[RagIngestionFailure] = []
        last: RagIngestionFailure | None = None
        for outcome in outcomes:
            for name in totals:
                totals[name] += getattr(outcome.progress, name)
            failures.extend(outcome.failures[: MAX_REPORTED_FAILURES - len(failures)])
            if outcome.last_failure is not None and (last is None or outcome.last_failure.timestamp >= last.timestamp):
                last = outcome.last_failure
        return cls(progress=RagIngestionProgress(**totals), failures=tuple(failures), last_failure=last)


def operation_record(operation: RagIngestionOperation) -> dict[str, object]:
    """A JSON-ready record of a finished operation (ids, counters, failure codes; never content)."""
    return RunOutcome(
        progress=operation.progress, failures=operation.failures, last_failure=operation.last_failure
    ).record()


def operation_from_record(
    *,
    operation_id: str,
    index_name: str,
    reason: str,
    state: str,
    started_at: datetime,
    completed_at: datetime | None,
    record: Mapping[str, Any],
) -> RagIngestionOperation:
    """The inverse of :func:`operation_record` plus the columns a store keeps beside it.

    Unknown counters (a newer writer) are ignored, missing ones are zero, so old and new records load.
    """
    outcome = RunOutcome.from_record(record)
    return RagIngestionOperation(
        operation_id=operation_id,
        index_name=index_name,
        reason=RagIngestionReason(reason),
        state=RagIngestionState(state),
        started_at=started_at,
        completed_at=completed_at,
        progress=outcome.progress,
        last_failure=outcome.last_failure,
        failures=outcome.failures,
    )


def _failure_record(failure: RagIngestionFailure) -> dict[str, object]:
    return {
        "code": failure.code,
        "timestamp": failure.timestamp.isoformat(),
        "document_id": failure.document_id,
        "source_kind": failure.source_kind,
    }


def _failure_from(record: Mapping[str, Any]) -> RagIngestionFailure:
    return RagIngestionFailure(
        code=str(record["code"]),
        timestamp=datetime.fromisoformat(str(record["timestamp"])),
        document_id=record.get("document_id"),
        source_kind=record.get("source_kind"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RagDocumentChanges:
    """What a document API call did: the same counters and failure records as a run, for its documents."""

    progress: RagIngestionProgress
    failures: tuple[RagIngestionFailure, ...] = ()

"""Ingestion operation snapshots, states and readiness. All immutable; the manager swaps snapshots."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "MAX_REPORTED_FAILURES",
    "RagIndexReadiness",
    "RagIndexStatus",
    "RagIngestionFailure",
    "RagIngestionOperation",
    "RagIngestionProgress",
    "RagIngestionReason",
    "RagIngestionState",
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

    @property
    def duration_seconds(self) -> float | None:
        if self.completed_at is None:
            return None
        return (self.completed_at - self.started_at).total_seconds()


@dataclass(frozen=True, slots=True, kw_only=True)
class RagIndexStatus:
    """Readiness and operation state are separate: a READY index may have a FAILED last operation
    only through DEGRADED, and an active operation never hides usable content."""

    index_name: str
    readiness: RagIndexReadiness
    active_operation: RagIngestionOperation | None
    last_operation: RagIngestionOperation | None
    updated_at: datetime

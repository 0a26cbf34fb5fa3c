"""Work claims: the optional store capability that lets many processes share one index's ingestion run.

A shared run has ``parts`` buckets of documents (``0 .. parts - 1``, by a stable hash of the document
id) and one more part, the *finish* (number ``parts``), which becomes claimable only when every bucket
is done: whoever claims it deletes the documents no bucket saw and ends the run. A worker claims one
part at a time under a lease (the store's clock decides expiry, never a worker's), renews it while it
works, and completes it with what it did; a part whose lease expired is claimable again, so a dead
worker's bucket is taken over. Claims never hold a transaction or a connection between calls.

At most one run per index is running at a time: joining while one runs returns it. With a ``key``
(a deployment's startup), a run that already completed under that key is returned instead of a new
one, so a deployment's startup ingestion runs once however many replicas start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

__all__ = ["PartResult", "SharedRun", "WorkClaims"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedRun:
    """A shared run as the store last reported it. ``state`` is a ``RagIngestionState`` value; ``result``
    is the finished run's ``operation_record`` (counters and failure records), ``None`` while it runs."""

    index_name: str
    operation_id: str
    reason: str
    parts: int
    state: str
    started_at: datetime
    completed_at: datetime | None = None
    result: Mapping[str, Any] | None = None

    @property
    def finish_part(self) -> int:
        """The part claimed after every bucket is done: stale documents are deleted, the run ends."""
        return self.parts


@dataclass(frozen=True, slots=True, kw_only=True)
class PartResult:
    """What a completed bucket recorded: its pass's ``operation_record`` and the digests of the ids it saw."""

    part: int
    record: Mapping[str, Any]
    seen: bytes


@runtime_checkable
class WorkClaims(Protocol):
    """Optional store capability: one ingestion run of an index shared by many worker processes.

    Every method may raise the store's ``VectorStoreUnavailableError``; a ``False`` answer means the
    caller no longer holds the part (its lease expired and another worker took it over) or the run is
    no longer running.
    """

    async def join_run(
        self, index_name: str, *, operation_id: str, reason: str, parts: int, key: str | None = None
    ) -> SharedRun:
        """The running run of the index, else a completed one under ``key``, else a new run with these values.

        The index must exist (``ensure_index``)."""
        ...

    async def refresh_run(self, run: SharedRun) -> SharedRun:
        """The run's current state."""
        ...

    async def claim_part(self, run: SharedRun, *, holder: str, lease_seconds: float) -> int | None:
        """A pending or expired part, now held by ``holder``; the finish part only once every bucket is
        done; ``None`` when nothing is claimable now (or the run is no longer running)."""
        ...

    async def renew_part(self, run: SharedRun, part: int, *, holder: str, lease_seconds: float) -> bool:
        """Extend the lease; False when ``holder`` lost the part or the run ended."""
        ...

    async def release_part(self, run: SharedRun, part: int, *, holder: str) -> None:
        """Give a held part back at once (a worker leaving), so another worker need not wait for the lease."""
        ...

    async def complete_part(
        self, run: SharedRun, part: int, *, holder: str, record: Mapping[str, Any], seen: bytes
    ) -> bool:
        """Mark a held bucket done with its pass's record and seen-id digests; False when it was lost."""
        ...

    async def part_results(self, run: SharedRun) -> Sequence[PartResult]:
        """Every completed bucket's record and digests, by part."""
        ...

    async def end_run(self, run: SharedRun, *, state: str, record: Mapping[str, Any]) -> bool:
        """End a running run with its terminal state and result; False when it had already ended."""
        ...

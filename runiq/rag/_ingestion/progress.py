"""Counters and failure records of one ingestion run, updated as its stages go."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from runiq.logging import get_logger
from runiq.rag._ingestion.operation import (
    MAX_REPORTED_FAILURES,
    RagIngestionFailure,
    RagIngestionPhase,
    RagIngestionProgress,
)
from runiq.rag._observability.identity import identity_hash

__all__ = ["ProgressTracker"]

log = get_logger(__name__)


_COUNTERS = tuple(RagIngestionProgress.__dataclass_fields__)


@dataclass(slots=True)
class ProgressTracker:
    """Counters are plain integers updated in place (a run adds to them per document and per batch);
    :attr:`progress` is an immutable snapshot taken when someone looks."""

    phase: RagIngestionPhase = RagIngestionPhase.OPENING
    last_failure: RagIngestionFailure | None = None
    failures: list[RagIngestionFailure] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTERS, 0))

    @property
    def progress(self) -> RagIngestionProgress:
        return RagIngestionProgress(**self._counts)

    def add(self, **deltas: int) -> None:
        counts = self._counts
        for name, delta in deltas.items():
            if name not in counts:
                raise TypeError(f"unknown ingestion counter: {name}")
            counts[name] += delta

    def adopt(self, progress: RagIngestionProgress) -> None:
        """Take ``progress`` as the counters (a shared run's totals, which its finisher recorded)."""
        self._counts = {name: getattr(progress, name) for name in _COUNTERS}

    def expect(self, documents: int) -> None:
        """The number of documents the run will process, once known."""
        self._counts["expected_documents"] = documents

    def fail(self, document_id: str | None, code: str, source_kind: str | None = None) -> None:
        self.add(processed_documents=1, failed_documents=1)
        self.last_failure = RagIngestionFailure(
            code=code, timestamp=datetime.now(UTC), document_id=document_id, source_kind=source_kind
        )
        if len(self.failures) < MAX_REPORTED_FAILURES:
            self.failures.append(self.last_failure)

    def document_failed(
        self, index_name: str, document_id: str, code: str, error: str | None = None, source_kind: str | None = None
    ) -> None:
        """A document the run could not ingest (a source's failure, a duplicate id, or one the pipeline
        could not prepare, embed or write): logged by hashed id, code and error type only."""
        log.warning(
            "ingestion.document_failed", index=index_name, document=identity_hash(document_id), code=code, error=error
        )
        self.fail(document_id, code, source_kind)

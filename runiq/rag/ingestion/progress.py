"""Counters and failure records of one ingestion run, updated as its stages go."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from runiq.logging import get_logger
from runiq.rag.ingestion.operation import MAX_REPORTED_FAILURES, RagIngestionFailure, RagIngestionProgress

__all__ = ["ProgressTracker", "safe_id"]

log = get_logger(__name__)


def safe_id(value: str) -> str:
    """A short hash for logs: document ids are often paths."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(slots=True)
class ProgressTracker:
    progress: RagIngestionProgress = field(default_factory=RagIngestionProgress)
    last_failure: RagIngestionFailure | None = None
    failures: list[RagIngestionFailure] = field(default_factory=list)

    def add(self, **deltas: int) -> None:
        current = self.progress
        self.progress = replace(current, **{k: getattr(current, k) + v for k, v in deltas.items()})

    def fail(self, document_id: str | None, code: str, source_kind: str | None = None) -> None:
        self.add(processed_documents=1, failed_documents=1)
        self.last_failure = RagIngestionFailure(
            code=code, timestamp=datetime.now(UTC), document_id=document_id, source_kind=source_kind
        )
        if len(self.failures) < MAX_REPORTED_FAILURES:
            self.failures.append(self.last_failure)

    def document_failed(self, index_name: str, document_id: str, code: str, error: str) -> None:
        """A document the pipeline could not ingest: logged by hashed id, code and error type only."""
        log.warning(
            "ingestion.document_failed", index=index_name, document=safe_id(document_id), code=code, error=error
        )
        self.fail(document_id, code)

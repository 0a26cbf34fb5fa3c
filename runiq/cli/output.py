"""The JSON documents that ``runiq status|ingest|query --json`` print.

These models are the one definition of each shape: the CLI's tables are drawn from them, the JSON
Schemas in ``runiq/cli/schemas/`` are generated from them (``python -m runiq.cli.output`` rewrites the
files; a test fails when they drift), and ``runiq query --server`` parses a server's answer with
:class:`ServerQueryAnswer`. Every document carries ``"version": 1``; a field is only ever added under
the same version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from runiq.rag import (
    IndexDefinition,
    IngestionStrategyKind,
    RagIndexReadiness,
    RagIngestionFailure,
    RagIngestionOperation,
    RagIngestionReason,
    RagIngestionState,
    RagRetrievalHit,
    RagRetrievalMode,
    RagRetrievalResult,
)
from runiq.rag._retrieval import SourceRank
from runiq.rag._stores import DistanceMetric

__all__ = [
    "SCHEMA_DIRECTORY",
    "HitOutput",
    "IndexStatusOutput",
    "IngestOutput",
    "OperationOutput",
    "QueryOutput",
    "ServerQueryAnswer",
    "StatusOutput",
    "schemas",
]

SCHEMA_DIRECTORY = Path(__file__).with_name("schemas")


class _Shape(BaseModel):
    # Parsing ignores unknown fields (a newer server may add some); the published schemas forbid them,
    # so what this CLI prints never holds an undocumented field.
    model_config = ConfigDict(
        frozen=True,
        json_schema_extra={"additionalProperties": False},
        json_schema_serialization_defaults_required=True,  # printed documents always hold every field
    )


class FailureOutput(_Shape):
    """One failed document: its id (for a directory source, the path relative to the root) and a code."""

    document_id: str | None
    code: str
    source_kind: str | None
    timestamp: datetime

    @classmethod
    def of(cls, failure: RagIngestionFailure) -> FailureOutput:
        return cls(
            document_id=failure.document_id,
            code=failure.code,
            source_kind=failure.source_kind,
            timestamp=failure.timestamp,
        )


class ProgressOutput(_Shape):
    """A run's counters: ``skipped_documents`` were unchanged (and stay stored); ``skipped_files`` are
    files no loader reads (images, archives...), passed over and never counted as failed."""

    discovered_documents: int
    processed_documents: int
    added_documents: int
    updated_documents: int
    skipped_documents: int
    deleted_documents: int
    failed_documents: int
    produced_chunks: int
    produced_embeddings: int
    embedding_calls: int
    skipped_files: int = 0  # absent from an older server's answer


class OperationOutput(_Shape):
    """One ingestion run. ``failures`` lists the first failed documents (at most 1,000);
    ``progress.failed_documents`` is the exact count and ``failures_truncated`` says whether some are missing."""

    index_name: str
    operation_id: str
    reason: RagIngestionReason
    state: RagIngestionState
    started_at: datetime
    completed_at: datetime | None
    duration_seconds: float | None
    progress: ProgressOutput
    failures: list[FailureOutput]
    failures_truncated: bool
    last_failure: FailureOutput | None

    @classmethod
    def of(cls, operation: RagIngestionOperation) -> OperationOutput:
        p = operation.progress
        return cls(
            index_name=operation.index_name,
            operation_id=operation.operation_id,
            reason=operation.reason,
            state=operation.state,
            started_at=operation.started_at,
            completed_at=operation.completed_at,
            duration_seconds=operation.duration_seconds,
            progress=ProgressOutput(**{name: getattr(p, name) for name in ProgressOutput.model_fields}),
            failures=[FailureOutput.of(f) for f in operation.failures],
            failures_truncated=p.failed_documents > len(operation.failures),
            last_failure=FailureOutput.of(operation.last_failure) if operation.last_failure else None,
        )


class IngestOutput(_Shape):
    """``runiq ingest --json``: one operation per index; ``completed`` is true when every run completed
    (the command then exits 0, otherwise 1)."""

    version: Literal[1] = 1
    completed: bool
    operations: list[OperationOutput]

    @classmethod
    def of(cls, operations: Iterable[RagIngestionOperation]) -> IngestOutput:
        runs = [OperationOutput.of(op) for op in operations]
        return cls(completed=all(r.state is RagIngestionState.COMPLETED for r in runs), operations=runs)


class IndexStatusOutput(_Shape):
    """A declared index. ``readiness`` is this process's view: a CLI process has run nothing yet, so a
    durable index that holds data still reads ``not_initialized`` here."""

    name: str
    strategy: IngestionStrategyKind
    schedule: str | None
    sources: list[str]
    embedding: str | None
    vector_store: str
    metric: DistanceMetric
    default_mode: RagRetrievalMode
    readiness: RagIndexReadiness

    @classmethod
    def of(cls, definition: IndexDefinition, readiness: RagIndexReadiness) -> IndexStatusOutput:
        return cls(
            name=definition.name,
            strategy=definition.ingestion.kind,
            schedule=definition.ingestion.schedule,
            sources=sorted({s.source_kind for s in definition.sources}),
            embedding=definition.embedding.display_name if definition.embedding else None,
            vector_store=definition.vector_store.display_name,
            metric=definition.metric,
            default_mode=definition.default_mode,
            readiness=readiness,
        )


class StatusOutput(_Shape):
    """``runiq status --json``: the declared indexes in registration order."""

    version: Literal[1] = 1
    indexes: list[IndexStatusOutput]


class SourceRankOutput(_Shape):
    rank: int
    raw_score: float
    metric: str

    @classmethod
    def of(cls, source: SourceRank | None) -> SourceRankOutput | None:
        return None if source is None else cls(rank=source.rank, raw_score=source.raw_score, metric=source.metric)


class ProvenanceOutput(_Shape):
    """How a hit was found: its rank and raw score in each source, and the RRF value (hybrid only)."""

    mode: RagRetrievalMode | None = None
    semantic: SourceRankOutput | None = None
    lexical: SourceRankOutput | None = None
    fused_score: float | None = None
    fused_rank: int | None = None


class HitOutput(_Shape):
    """One hit, with the score semantics of :class:`runiq.rag.RagRetrievalHit` (the semantic score, if any,
    in ``raw_score``/``metric``/``higher_is_better``/``relevance``; the lexical one in ``provenance``)."""

    rank: int
    document_id: str
    chunk_id: str
    raw_score: float | None
    metric: str | None
    higher_is_better: bool | None
    relevance: float | None
    content: str
    provenance: ProvenanceOutput
    # Where the chunk lies in its document (absent from an older server's answer).
    page: int | None = None
    start_offset: int | None = None
    end_offset: int | None = None

    @classmethod
    def of(cls, hit: RagRetrievalHit) -> HitOutput:
        p = hit.provenance
        return cls(
            rank=hit.rank,
            document_id=hit.document_id,
            chunk_id=hit.chunk_id,
            raw_score=hit.raw_score,
            metric=hit.metric,
            higher_is_better=hit.higher_is_better,
            relevance=hit.relevance,
            content=hit.content,
            provenance=ProvenanceOutput(
                mode=p.mode,
                semantic=SourceRankOutput.of(p.semantic),
                lexical=SourceRankOutput.of(p.lexical),
                fused_score=p.fused_score,
                fused_rank=p.fused_rank,
            ),
            page=hit.page,
            start_offset=hit.start_offset,
            end_offset=hit.end_offset,
        )


class QueryOutput(_Shape):
    """``runiq query --json``: the hits in rank order. ``mode`` is the mode that ran (``null`` when a
    server did not say and none was asked for)."""

    version: Literal[1] = 1
    index_name: str
    mode: RagRetrievalMode | None
    hits: list[HitOutput]

    @classmethod
    def of(cls, result: RagRetrievalResult) -> QueryOutput:
        return cls(index_name=result.index_name, mode=result.mode, hits=[HitOutput.of(h) for h in result.hits])


class ServerQueryAnswer(BaseModel):
    """What ``POST {base}/api/rag/indexes/{name}/query`` answers (unknown fields are ignored)."""

    model_config = ConfigDict(frozen=True)

    hits: list[HitOutput]
    mode: RagRetrievalMode | None = None


_DOCUMENTS: dict[str, type[BaseModel]] = {"ingest": IngestOutput, "query": QueryOutput, "status": StatusOutput}


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema (draft 2020-12) of each command's ``--json`` document, by command name."""
    dialect = "https://json-schema.org/draft/2020-12/schema"
    return {
        name: {"$schema": dialect, **model.model_json_schema(mode="serialization")}
        for name, model in _DOCUMENTS.items()
    }


def _write_schemas() -> None:
    SCHEMA_DIRECTORY.mkdir(exist_ok=True)
    for name, schema in schemas().items():
        (SCHEMA_DIRECTORY / f"{name}.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    _write_schemas()

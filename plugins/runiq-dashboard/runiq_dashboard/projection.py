"""Domain objects -> DTOs. The only module that reads runiq's definitions and operation snapshots.

Free-form strings that plugins supply (source kinds, failure codes, health reasons) are passed through
only when they look like identifiers; anything else is replaced, so a misbehaving plugin cannot
smuggle a path or a message into a response. A failed document's own id is projected only when the
caller may see document ids (``with_document_ids``: the ``query`` role). Source and document
identities are runiq's :func:`~runiq.rag.providers.identity_hash`, the value its logs and events
carry for the same id.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from runiq.rag import (
    IndexDefinition,
    RagIndexStatus,
    RagIngestionFailure,
    RagIngestionOperation,
    RagIngestionProgress,
)
from runiq.rag.providers import StoreHealth, identity_hash
from runiq_dashboard.dto import (
    FAILURE_MESSAGE,
    RagFailedDocumentDto,
    RagFailureDto,
    RagIndexConfigurationDto,
    RagIndexDetailDto,
    RagIndexListItemDto,
    RagIndexOverviewDto,
    RagIndexRuntimeStatusDto,
    RagOperationDto,
    RagProgressDto,
    RagRunDto,
    RagRunFailuresDto,
    RagSourceDto,
    RagStoreDto,
)
from runiq_dashboard.progress_clock import ProgressClock

__all__ = [
    "detail",
    "failed_documents",
    "list_item",
    "operation",
    "run",
    "runtime_status",
    "store",
]

_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _token(value: str | None, fallback: str) -> str:
    return value if value is not None and _TOKEN.match(value) else fallback


def sources(definition: IndexDefinition) -> list[RagSourceDto]:
    result = []
    for source in definition.sources:
        digest = identity_hash(source.identity)
        result.append(
            RagSourceDto(identity=digest, type=_token(source.source_kind, "custom"), display_value=f"Source {digest}")
        )
    return result


def configuration(definition: IndexDefinition) -> RagIndexConfigurationDto:
    strategy = definition.ingestion
    embedding = definition.embedding
    return RagIndexConfigurationDto(
        ingestion_strategy=strategy.kind.value,
        schedule_expression=strategy.schedule,
        schedule_time_zone=strategy.time_zone,
        vector_store_type=definition.vector_store.name,
        vector_store_reference=definition.vector_store.display_name,
        embedding_type=embedding.name if embedding is not None else None,
        embedding_reference=embedding.display_name if embedding is not None else None,
        reranker_reference=definition.reranker.display_name if definition.reranker is not None else None,
        metric=definition.metric.value,
        default_retrieval_mode=definition.default_mode.value,
        chunk_size=definition.chunking.max_characters,
        chunk_overlap=definition.chunking.overlap,
        embedding_batch_size=definition.embedding_batch_size,
        embedding_concurrency=definition.embedding_concurrency,
        embedding_timeout_seconds=definition.embedding_timeout_seconds,
    )


def progress(value: RagIngestionProgress) -> RagProgressDto:
    return RagProgressDto(
        discovered_documents=value.discovered_documents,
        processed_documents=value.processed_documents,
        added_documents=value.added_documents,
        updated_documents=value.updated_documents,
        skipped_documents=value.skipped_documents,
        deleted_documents=value.deleted_documents,
        failed_documents=value.failed_documents,
        produced_chunks=value.produced_chunks,
        produced_embeddings=value.produced_embeddings,
        embedding_calls=value.embedding_calls,
        skipped_files=value.skipped_files,
    )


def failure(value: RagIngestionFailure) -> RagFailureDto:
    return RagFailureDto(
        code=_token(value.code, "ingestion_failed"),
        message=FAILURE_MESSAGE,
        source_type=_token(value.source_kind, "custom") if value.source_kind is not None else None,
        document_identity=identity_hash(value.document_id) if value.document_id is not None else None,
        timestamp=value.timestamp,
    )


def _operation_fields(value: RagIngestionOperation, clock: ProgressClock | None) -> dict[str, object]:
    end = value.completed_at or datetime.now(UTC)
    return {
        "operation_id": value.operation_id,
        "index_name": value.index_name,
        "reason": value.reason.value,
        "state": value.state.value,
        "started_at": value.started_at,
        "completed_at": value.completed_at,
        "duration_milliseconds": round(max((end - value.started_at).total_seconds() * 1000.0, 0.0), 3),
        "updated_at": clock.updated_at(value) if clock is not None else value.completed_at or value.started_at,
        "progress": progress(value.progress),
    }


def operation(value: RagIngestionOperation, clock: ProgressClock | None = None) -> RagOperationDto:
    """``clock`` moves ``updatedAt`` with the counters of a running operation; without it a running
    operation's ``updatedAt`` is its start."""
    return RagOperationDto.model_validate(_operation_fields(value, clock))


def run(value: RagIngestionOperation, clock: ProgressClock | None = None) -> RagRunDto:
    last = value.last_failure
    return RagRunDto.model_validate(
        {
            **_operation_fields(value, clock),
            "listed_failures": len(value.failures),
            "last_failure_code": _token(last.code, "ingestion_failed") if last is not None else None,
        }
    )


def failed_documents(value: RagIngestionOperation, *, with_document_ids: bool) -> RagRunFailuresDto:
    return RagRunFailuresDto(
        operation_id=value.operation_id,
        index_name=value.index_name,
        state=value.state.value,
        failed_documents=value.progress.failed_documents,
        truncated=value.progress.failed_documents > len(value.failures),
        failures=[_failed_document(f, with_document_ids) for f in value.failures],
    )


def _failed_document(value: RagIngestionFailure, with_document_id: bool) -> RagFailedDocumentDto:
    document_id = value.document_id
    return RagFailedDocumentDto(
        code=_token(value.code, "ingestion_failed"),
        document_identity=identity_hash(document_id) if document_id is not None else None,
        document_id=document_id if with_document_id else None,
        source_type=_token(value.source_kind, "custom") if value.source_kind is not None else None,
        timestamp=value.timestamp,
    )


def store(health: StoreHealth, chunks: int | None, documents: int | None, *, exact: bool) -> RagStoreDto:
    return RagStoreDto(
        healthy=health.healthy,
        reason=_token(health.reason, "unhealthy") if health.reason is not None else None,
        chunk_count=chunks,
        document_count=documents,
        document_count_exact=exact,
    )


def _optional_operation(value: RagIngestionOperation | None, clock: ProgressClock | None) -> RagOperationDto | None:
    return operation(value, clock) if value is not None else None


def runtime_status(status: RagIndexStatus, clock: ProgressClock | None = None) -> RagIndexRuntimeStatusDto:
    """``lastUpdatedAt`` is the newest of the status's own time and the current operation's ``updatedAt``."""
    active = _optional_operation(status.active_operation, clock)
    last = _optional_operation(status.last_operation, clock)
    current, current_dto = (status.active_operation, active) if active else (status.last_operation, last)
    return RagIndexRuntimeStatusDto(
        index_name=status.index_name,
        readiness=status.readiness.value,
        active_operation=active,
        last_operation=last,
        progress=current_dto.progress if current_dto is not None else None,
        last_failure=failure(current.last_failure) if current is not None and current.last_failure else None,
        last_updated_at=max(status.updated_at, current_dto.updated_at) if current_dto else status.updated_at,
    )


def list_item(
    definition: IndexDefinition, status: RagIndexStatus, clock: ProgressClock | None = None
) -> RagIndexListItemDto:
    return RagIndexListItemDto(
        name=definition.name,
        source_count=len(definition.sources),
        sources=sources(definition),
        configuration=configuration(definition),
        readiness=status.readiness.value,
        active_operation=_optional_operation(status.active_operation, clock),
        last_operation=_optional_operation(status.last_operation, clock),
    )


def detail(
    definition: IndexDefinition, status: RagIndexStatus, clock: ProgressClock | None = None
) -> RagIndexDetailDto:
    return RagIndexDetailDto(
        overview=RagIndexOverviewDto(name=definition.name, source_count=len(definition.sources)),
        sources=sources(definition),
        configuration=configuration(definition),
        runtime=runtime_status(status, clock),
    )

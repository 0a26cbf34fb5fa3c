"""Domain objects -> DTOs. The only module that reads runiq's definitions and operation snapshots.

Free-form strings that plugins supply (source kinds, failure codes) are passed through only when they
look like identifiers; anything else is replaced, so a misbehaving plugin cannot smuggle a path or a
message into a response.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

from runiq.rag import (
    IndexDefinition,
    RagIndexStatus,
    RagIngestionFailure,
    RagIngestionOperation,
    RagIngestionProgress,
)
from runiq_dashboard.dto import (
    FAILURE_MESSAGE,
    RagFailureDto,
    RagIndexConfigurationDto,
    RagIndexDetailDto,
    RagIndexListItemDto,
    RagIndexOverviewDto,
    RagIndexRuntimeStatusDto,
    RagOperationDto,
    RagProgressDto,
    RagSourceDto,
)

__all__ = ["detail", "hash_identity", "list_item", "operation", "runtime_status"]

_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def hash_identity(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest().upper()


def _token(value: str | None, fallback: str) -> str:
    return value if value is not None and _TOKEN.match(value) else fallback


def sources(definition: IndexDefinition) -> list[RagSourceDto]:
    result = []
    for source in definition.sources:
        digest = hash_identity(source.identity)
        result.append(
            RagSourceDto(
                identity=digest, type=_token(source.source_kind, "custom"), display_value=f"Source {digest[:12]}"
            )
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
    )


def failure(value: RagIngestionFailure) -> RagFailureDto:
    return RagFailureDto(
        code=_token(value.code, "ingestion_failed"),
        message=FAILURE_MESSAGE,
        source_type=_token(value.source_kind, "custom") if value.source_kind is not None else None,
        document_identity=hash_identity(value.document_id) if value.document_id is not None else None,
        timestamp=value.timestamp,
    )


def operation(value: RagIngestionOperation) -> RagOperationDto:
    end = value.completed_at or datetime.now(UTC)
    return RagOperationDto(
        operation_id=value.operation_id,
        index_name=value.index_name,
        reason=value.reason.value,
        state=value.state.value,
        started_at=value.started_at,
        completed_at=value.completed_at,
        duration_milliseconds=round(max((end - value.started_at).total_seconds() * 1000.0, 0.0), 3),
        progress=progress(value.progress),
    )


def _optional_operation(value: RagIngestionOperation | None) -> RagOperationDto | None:
    return operation(value) if value is not None else None


def runtime_status(status: RagIndexStatus) -> RagIndexRuntimeStatusDto:
    current = status.active_operation or status.last_operation
    return RagIndexRuntimeStatusDto(
        index_name=status.index_name,
        readiness=status.readiness.value,
        active_operation=_optional_operation(status.active_operation),
        last_operation=_optional_operation(status.last_operation),
        progress=progress(current.progress) if current is not None else None,
        last_failure=failure(current.last_failure) if current is not None and current.last_failure else None,
        last_updated_at=status.updated_at,
    )


def list_item(definition: IndexDefinition, status: RagIndexStatus) -> RagIndexListItemDto:
    return RagIndexListItemDto(
        name=definition.name,
        source_count=len(definition.sources),
        sources=sources(definition),
        configuration=configuration(definition),
        readiness=status.readiness.value,
        active_operation=_optional_operation(status.active_operation),
        last_operation=_optional_operation(status.last_operation),
    )


def detail(definition: IndexDefinition, status: RagIndexStatus) -> RagIndexDetailDto:
    return RagIndexDetailDto(
        overview=RagIndexOverviewDto(name=definition.name, source_count=len(definition.sources)),
        sources=sources(definition),
        configuration=configuration(definition),
        runtime=runtime_status(status),
    )

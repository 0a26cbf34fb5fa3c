"""Explicit hosting DTOs (camelCase JSON). Safe display metadata only.

Nothing here holds a domain object: every field is a primitive filled by
:mod:`runiq_dashboard.projection`. Source and document identities are SHA-256 hashes (they may be
paths); a failed document's own id is added only for callers with the ``query`` role, who may see
document ids and chunk text anyway. Provider options (which may hold DSNs or keys) are never
projected, only the provider's registered name and its selection's display name; failure messages
are one fixed text. Enumerations use runiq's own values (``"manual"``, ``"not_initialized"``,
``"running"``). Readiness (is the index usable?) and operation state (what is the current/last run
doing?) are separate fields.

The query endpoint is the exception to camelCase: it takes and answers the snake_case documents of
``runiq query`` (:class:`RagQueryRequestDto`, and :class:`runiq.cli.output.QueryOutput`, the one
definition of a query result's shape, which ``runiq query --server`` parses).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from runiq.rag import RagRetrievalMode
from runiq.rag.providers import MAX_CANDIDATES, MAX_QUERY_CHARACTERS

__all__ = [
    "FAILURE_MESSAGE",
    "MAX_FILTERS",
    "AccessDto",
    "ProblemDto",
    "RagFailedDocumentDto",
    "RagFailureDto",
    "RagIndexConfigurationDto",
    "RagIndexDetailDto",
    "RagIndexListItemDto",
    "RagIndexOverviewDto",
    "RagIndexRuntimeStatusDto",
    "RagOperationDto",
    "RagProgressDto",
    "RagQueryRequestDto",
    "RagRunDto",
    "RagRunFailuresDto",
    "RagSourceDto",
    "RagStoreDto",
]

FAILURE_MESSAGE = "The ingestion operation failed. Review server logs using the operation identity."
MAX_FILTERS = 32
MAX_FILTER_KEY_CHARACTERS = 256
MAX_FILTER_VALUE_CHARACTERS = 4096


class _Dto(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")


class RagSourceDto(_Dto):
    identity: str = Field(
        description="identity_hash of the source's identity: 16 lower-case hex digits of its SHA-256."
    )
    type: str = Field(description="The source kind, for example 'directory'.")
    display_value: str = Field(description="'Source ' and the identity hash.")


class RagIndexConfigurationDto(_Dto):
    ingestion_strategy: str = Field(description="manual, on_startup, background_on_startup or scheduled.")
    schedule_expression: str | None = None
    schedule_time_zone: str | None = None
    vector_store_type: str = Field(description="The registered vector store provider name.")
    vector_store_reference: str = Field(description="The vector store selection's display name.")
    embedding_type: str | None = Field(default=None, description="The registered embedding provider name.")
    embedding_reference: str | None = Field(default=None, description="The embedding selection's display name.")
    reranker_reference: str | None = None
    metric: str
    default_retrieval_mode: str
    chunk_size: int
    chunk_overlap: int
    embedding_batch_size: int
    embedding_concurrency: int
    embedding_timeout_seconds: float | None = None


class RagProgressDto(_Dto):
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
    skipped_files: int = Field(default=0, description="Files no loader reads (images, archives...); never failures.")


class RagFailureDto(_Dto):
    code: str = Field(description="A stable failure category, for example 'ingestion_failed'.")
    message: str = Field(description="Always the same fixed text.")
    source_type: str | None = None
    document_identity: str | None = Field(
        default=None, description="identity_hash of the document id: 16 lower-case hex digits of its SHA-256."
    )
    timestamp: datetime


class RagOperationDto(_Dto):
    operation_id: str
    index_name: str
    reason: str = Field(description="manual, startup, background_startup or scheduled.")
    state: str = Field(description="running, cancelling, completed, partially_completed, failed or cancelled.")
    started_at: datetime
    completed_at: datetime | None = None
    duration_milliseconds: float = Field(description="Elapsed time so far while running.")
    updated_at: datetime = Field(
        description="When the counters last changed (while running, as this server saw them), else completedAt."
    )
    progress: RagProgressDto


class RagRunDto(RagOperationDto):
    """One run of the history: the operation plus what its failed-document list holds."""

    listed_failures: int = Field(description="Failed documents listed (the first 1,000); failedDocuments counts all.")
    last_failure_code: str | None = None


class RagFailedDocumentDto(_Dto):
    code: str = Field(description="Why the document failed, for example 'undecodable'.")
    document_identity: str | None = Field(
        default=None, description="identity_hash of the document id: 16 lower-case hex digits of its SHA-256."
    )
    document_id: str | None = Field(
        default=None, description="The document id (a path for directory sources): only for the query role."
    )
    source_type: str | None = None
    timestamp: datetime


class RagRunFailuresDto(_Dto):
    operation_id: str
    index_name: str
    state: str
    failed_documents: int = Field(description="Every failed document of the run (exact).")
    truncated: bool = Field(description="True when failedDocuments is more than the listed failures.")
    failures: list[RagFailedDocumentDto]


class RagStoreDto(_Dto):
    healthy: bool
    reason: str | None = Field(default=None, description="A fixed reason code when unhealthy, e.g. 'unreachable'.")
    chunk_count: int | None = Field(default=None, description="Chunks stored; null when the store cannot say.")
    document_count: int | None = Field(
        default=None, description="Documents stored; counted up to a cap when the store has no document count."
    )
    document_count_exact: bool = Field(description="False when documentCount stopped at the cap (show it as 'N+').")


class AccessDto(_Dto):
    roles: list[str] = Field(description="What the caller may do: read, and operate and query when granted.")


_FilterKey = Annotated[StrictStr, Field(min_length=1, max_length=MAX_FILTER_KEY_CHARACTERS)]
_FilterString = Annotated[StrictStr, Field(max_length=MAX_FILTER_VALUE_CHARACTERS)]
_FilterValue = _FilterString | StrictBool | StrictInt | StrictFloat


class RagQueryRequestDto(BaseModel):
    """``POST .../query``: what ``runiq query --server`` sends (snake_case)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    text: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARACTERS)
    mode: RagRetrievalMode | None = Field(default=None, description="Omitted or null: the index's default mode.")
    top_k: StrictInt = Field(default=5, ge=1, le=MAX_CANDIDATES)
    filters: dict[_FilterKey, _FilterValue] | None = Field(
        default=None, max_length=MAX_FILTERS, description="Metadata equality filters, all must match."
    )


class RagIndexRuntimeStatusDto(_Dto):
    index_name: str
    readiness: str = Field(description="not_initialized, initializing, ready, degraded or failed.")
    active_operation: RagOperationDto | None = None
    last_operation: RagOperationDto | None = None
    progress: RagProgressDto | None = Field(default=None, description="Of the active operation, else the last.")
    last_failure: RagFailureDto | None = Field(default=None, description="Of the active operation, else the last.")
    last_updated_at: datetime


class RagIndexListItemDto(_Dto):
    name: str
    source_count: int
    sources: list[RagSourceDto]
    configuration: RagIndexConfigurationDto
    readiness: str
    active_operation: RagOperationDto | None = None
    last_operation: RagOperationDto | None = None


class RagIndexOverviewDto(_Dto):
    name: str
    source_count: int


class RagIndexDetailDto(_Dto):
    overview: RagIndexOverviewDto
    sources: list[RagSourceDto]
    configuration: RagIndexConfigurationDto
    runtime: RagIndexRuntimeStatusDto


class ProblemDto(_Dto):
    code: str
    message: str
    active_operation: RagOperationDto | None = None

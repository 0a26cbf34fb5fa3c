"""Explicit hosting DTOs (camelCase JSON). Safe display metadata only.

Nothing here holds a domain object: every field is a primitive filled by
:mod:`runiq_dashboard.projection`. Source and document identities are SHA-256 hashes (they may be
paths); provider options (which may hold DSNs or keys) are never projected, only the provider's
registered name and its selection's display name; failure messages are one fixed text. Enumerations
use runiq's own values (``"manual"``, ``"not_initialized"``, ``"running"``). Readiness (is the index
usable?) and operation state (what is the current/last run doing?) are separate fields.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "FAILURE_MESSAGE",
    "ProblemDto",
    "RagFailureDto",
    "RagIndexConfigurationDto",
    "RagIndexDetailDto",
    "RagIndexListItemDto",
    "RagIndexOverviewDto",
    "RagIndexRuntimeStatusDto",
    "RagOperationDto",
    "RagProgressDto",
    "RagSourceDto",
]

FAILURE_MESSAGE = "The ingestion operation failed. Review server logs using the operation identity."


class _Dto(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")


class RagSourceDto(_Dto):
    identity: str = Field(description="Uppercase hex SHA-256 of the source's identity.")
    type: str = Field(description="The source kind, for example 'directory'.")
    display_value: str = Field(description="'Source ' and the first 12 characters of the identity hash.")


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


class RagFailureDto(_Dto):
    code: str = Field(description="A stable failure category, for example 'ingestion_failed'.")
    message: str = Field(description="Always the same fixed text.")
    source_type: str | None = None
    document_identity: str | None = Field(default=None, description="Uppercase hex SHA-256 of the document id.")
    timestamp: datetime


class RagOperationDto(_Dto):
    operation_id: str
    index_name: str
    reason: str = Field(description="manual, startup, background_startup or scheduled.")
    state: str = Field(description="running, cancelling, completed, partially_completed, failed or cancelled.")
    started_at: datetime
    completed_at: datetime | None = None
    duration_milliseconds: float = Field(description="Elapsed time so far while running.")
    progress: RagProgressDto


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

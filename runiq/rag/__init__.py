"""runiq.rag: the application face of runiq. Everything public is listed in ``__all__``.

What an application needs: registration (``add_runiq_rag`` and the builders), queries and their
results, ingestion and its status, context assembly, observability, retrieval scopes and the common
errors (the whole tree is :mod:`runiq.errors`). Provider authors import from :mod:`runiq.rag.providers`;
contract kits live in :mod:`runiq.rag.testing`.

Names load on first use (PEP 562, see :mod:`runiq.rag._lazy`): the imports under ``_TYPE_CHECKING``
are what type checkers read and say which module defines each name, imported when the name is first
looked up. So ``import runiq.rag`` does not load the RAG core, and ``runiq --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from runiq.rag._lazy import lazy_face as _lazy_face

if _TYPE_CHECKING:
    from runiq.errors import (
        IndexNotFoundError,
        IngestionConflictError,
        IngestionError,
        ProviderNotFoundError,
        RagConfigurationError,
        RagError,
        RagValidationError,
        RetrievalError,
        RetrievalErrorCode,
        StartupIngestionError,
    )
    from runiq.rag._context import (
        ContextBudget,
        DuplicateFilterOptions,
        GroundingOptions,
        RagContextAssembler,
        RagContextItem,
        RagContextOptions,
        RagContextOutcome,
        RagContextResult,
        RagNoContextReason,
        RerankingOptions,
    )
    from runiq.rag._documents import Metadata, MetadataValue, RagDocument
    from runiq.rag._embeddings import HashingEmbedding
    from runiq.rag._ingestion.manager import RagIngestionManager
    from runiq.rag._ingestion.operation import (
        RagDocumentChanges,
        RagIndexReadiness,
        RagIndexStatus,
        RagIngestionFailure,
        RagIngestionOperation,
        RagIngestionPhase,
        RagIngestionProgress,
        RagIngestionReason,
        RagIngestionState,
        RagIngestionThroughput,
    )
    from runiq.rag._ingestion.strategies import IngestionBuilder, IngestionStrategyKind
    from runiq.rag._observability import (
        ContentPreviewOptions,
        IngestionEvent,
        ObservabilitySink,
        RagObservabilityOptions,
        RagObservabilityRedactor,
        RagQueryVisibility,
        RetrievalEvent,
    )
    from runiq.rag._registration import IndexBuilder, IndexDefinition, IndexRegistry, RagBuilder
    from runiq.rag._reranking import LexicalOverlapReranking
    from runiq.rag._retrieval import (
        RagQuery,
        RagRetrievalHit,
        RagRetrievalMode,
        RagRetrievalProvenance,
        RagRetrievalResult,
        RagRetriever,
        RetrievalOptions,
    )
    from runiq.rag._retrieval.scope import RetrievalScopeProvider, StaticRetrievalScope
    from runiq.rag._runtime import IndexRuntime
    from runiq.rag._wiring import add_runiq_rag

__all__ = [
    "ContentPreviewOptions",
    "ContextBudget",
    "DuplicateFilterOptions",
    "GroundingOptions",
    "HashingEmbedding",
    "IndexBuilder",
    "IndexDefinition",
    "IndexNotFoundError",
    "IndexRegistry",
    "IndexRuntime",
    "IngestionBuilder",
    "IngestionConflictError",
    "IngestionError",
    "IngestionEvent",
    "IngestionStrategyKind",
    "LexicalOverlapReranking",
    "Metadata",
    "MetadataValue",
    "ObservabilitySink",
    "ProviderNotFoundError",
    "RagBuilder",
    "RagConfigurationError",
    "RagContextAssembler",
    "RagContextItem",
    "RagContextOptions",
    "RagContextOutcome",
    "RagContextResult",
    "RagDocument",
    "RagDocumentChanges",
    "RagError",
    "RagIndexReadiness",
    "RagIndexStatus",
    "RagIngestionFailure",
    "RagIngestionManager",
    "RagIngestionOperation",
    "RagIngestionPhase",
    "RagIngestionProgress",
    "RagIngestionReason",
    "RagIngestionState",
    "RagIngestionThroughput",
    "RagNoContextReason",
    "RagObservabilityOptions",
    "RagObservabilityRedactor",
    "RagQuery",
    "RagQueryVisibility",
    "RagRetrievalHit",
    "RagRetrievalMode",
    "RagRetrievalProvenance",
    "RagRetrievalResult",
    "RagRetriever",
    "RagValidationError",
    "RerankingOptions",
    "RetrievalError",
    "RetrievalErrorCode",
    "RetrievalEvent",
    "RetrievalOptions",
    "RetrievalScopeProvider",
    "StartupIngestionError",
    "StaticRetrievalScope",
    "add_runiq_rag",
]

if not _TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute
    __getattr__, __dir__ = _lazy_face(__name__, __file__, __all__, globals(), submodules=True)

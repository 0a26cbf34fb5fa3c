"""runiq.rag: the provider-neutral RAG API. Everything public is listed in ``__all__``.

Names load on first use (PEP 562). The imports under ``TYPE_CHECKING`` are what type checkers read
and, parsed once at run time, say which module each name comes from; that module is imported when
the name is first looked up. So ``from runiq.rag import hookimpl`` (every plugin's entry module) does
not load the RAG core, and ``runiq --help`` stays fast.
"""

from __future__ import annotations

import importlib as _importlib
from importlib.util import find_spec as _find_spec
from typing import TYPE_CHECKING as _TYPE_CHECKING

if _TYPE_CHECKING:
    from runiq.plugins.hookspecs import hookimpl
    from runiq.plugins.registry import EmptyOptions, ProviderKind, ProviderRegistry
    from runiq.rag.chunking import Chunker, ChunkingOptions, MarkdownChunker, TextChunker
    from runiq.rag.context import (
        ContextBudget,
        ContextBudgetUnit,
        ContextRetriever,
        DuplicateFilterOptions,
        GroundingOptions,
        NullRelevancePolicy,
        RagCandidateDecision,
        RagContextAssembler,
        RagContextBudgetReport,
        RagContextItem,
        RagContextOptions,
        RagContextOutcome,
        RagContextResult,
        RagDecisionReason,
        RagNoContextReason,
        RagPolicyStage,
        RagRerankingOutcome,
        RagRerankingReport,
        RagRerankScore,
        RerankerFailurePolicy,
        RerankingOptions,
        estimate_tokens,
        normalise_text,
    )
    from runiq.rag.documents import ChunkKey, Metadata, MetadataValue, RagChunk, RagDocument
    from runiq.rag.embeddings import (
        EmbeddingBatcher,
        EmbeddingClient,
        EmbeddingInputKind,
        HashingEmbedder,
        HashingEmbedding,
    )
    from runiq.rag.errors import (
        DocumentSourceError,
        IndexNotFoundError,
        IngestionConflictError,
        IngestionError,
        IngestionUnavailableError,
        NoActiveIngestionError,
        ProviderError,
        ProviderNotFoundError,
        ProviderResponseError,
        ProviderTimeoutError,
        ProviderUnavailableError,
        RagConfigurationError,
        RagError,
        RagValidationError,
        RetrievalError,
        RetrievalErrorCode,
        SchemaMismatchError,
        StartupIngestionError,
        VectorDimensionMismatchError,
        VectorIndexNotFoundError,
        VectorStoreError,
        VectorStoreUnavailableError,
    )
    from runiq.rag.ingestion.manager import RagIngestionManager
    from runiq.rag.ingestion.operation import (
        RagDocumentChanges,
        RagIndexReadiness,
        RagIndexStatus,
        RagIngestionFailure,
        RagIngestionOperation,
        RagIngestionProgress,
        RagIngestionReason,
        RagIngestionState,
    )
    from runiq.rag.ingestion.strategies import IngestionBuilder, IngestionStrategy, IngestionStrategyKind
    from runiq.rag.lexical import LexicalQuery, parse_lexical_query
    from runiq.rag.limits import MAX_CANDIDATES
    from runiq.rag.observability import (
        ContentPreviewOptions,
        DefaultObservabilityRedactor,
        IngestionEvent,
        ObservabilityRecorder,
        ObservabilitySink,
        RagObservabilityOptions,
        RagObservabilityRedactor,
        RagObservabilityValueKind,
        RagQueryVisibility,
        RetrievalEvent,
        RetrievalHitPreview,
    )
    from runiq.rag.registration import (
        IndexBuilder,
        IndexDefinition,
        IndexRegistry,
        ProviderReference,
        ProviderSelection,
        RagBuilder,
    )
    from runiq.rag.reranking import (
        MAX_RERANK_CANDIDATES,
        LexicalOverlapOptions,
        LexicalOverlapReranker,
        LexicalOverlapReranking,
        RagAnswerability,
        RagRerankCandidate,
        RagRerankCandidateResult,
        RagReranker,
        RagRerankRequest,
        RagRerankResponse,
        RerankerError,
        RerankerNotApprovedError,
        RerankerRegistration,
        RerankerResolver,
        RerankerResponseError,
        RerankerTimeoutError,
        RerankerUnavailableError,
        RerankingFailedError,
        RerankingFailureCode,
        RerankResponseViolation,
        ValidatedRerank,
        index_reranker_resolver,
        validate_rerank_response,
    )
    from runiq.rag.retrieval import (
        RagQuery,
        RagRetrievalHit,
        RagRetrievalMode,
        RagRetrievalProvenance,
        RagRetrievalResult,
        RagRetrievalStatistics,
        RagRetriever,
        RetrievalOptions,
        SourceRank,
        reciprocal_rank_fusion,
    )
    from runiq.rag.retrieval.scope import RetrievalScopeProvider, StaticRetrievalScope
    from runiq.rag.runtime import IndexResources, IndexRuntime
    from runiq.rag.sources import (
        DirectorySource,
        DocumentSource,
        InMemorySource,
        SourceFailure,
        SourceItem,
        SourceReadResult,
        SourceSkip,
    )
    from runiq.rag.stores import (
        DistanceMetric,
        IndexSpec,
        InMemoryVectorStore,
        InMemoryVectorStoreSelection,
        LexicalSearch,
        StoredDocument,
        StoreHit,
        VectorStore,
    )
    from runiq.rag.wiring import add_runiq_rag

__all__ = [
    "ChunkKey",
    "Chunker",
    "ChunkingOptions",
    "ContentPreviewOptions",
    "ContextBudget",
    "ContextBudgetUnit",
    "ContextRetriever",
    "DefaultObservabilityRedactor",
    "DirectorySource",
    "DistanceMetric",
    "DocumentSource",
    "DocumentSourceError",
    "DuplicateFilterOptions",
    "EmbeddingBatcher",
    "EmbeddingClient",
    "EmbeddingInputKind",
    "EmptyOptions",
    "GroundingOptions",
    "HashingEmbedder",
    "HashingEmbedding",
    "InMemorySource",
    "InMemoryVectorStore",
    "InMemoryVectorStoreSelection",
    "IndexBuilder",
    "IndexDefinition",
    "IndexNotFoundError",
    "IndexRegistry",
    "IndexResources",
    "IndexRuntime",
    "IndexSpec",
    "IngestionBuilder",
    "IngestionConflictError",
    "IngestionError",
    "IngestionEvent",
    "IngestionStrategy",
    "IngestionStrategyKind",
    "IngestionUnavailableError",
    "LexicalOverlapOptions",
    "LexicalOverlapReranker",
    "LexicalOverlapReranking",
    "LexicalQuery",
    "LexicalSearch",
    "MAX_CANDIDATES",
    "MAX_RERANK_CANDIDATES",
    "MarkdownChunker",
    "Metadata",
    "MetadataValue",
    "NoActiveIngestionError",
    "NullRelevancePolicy",
    "ObservabilityRecorder",
    "ObservabilitySink",
    "ProviderError",
    "ProviderKind",
    "ProviderNotFoundError",
    "ProviderReference",
    "ProviderRegistry",
    "ProviderResponseError",
    "ProviderSelection",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "RagAnswerability",
    "RagBuilder",
    "RagCandidateDecision",
    "RagChunk",
    "RagConfigurationError",
    "RagContextAssembler",
    "RagContextBudgetReport",
    "RagContextItem",
    "RagContextOptions",
    "RagContextOutcome",
    "RagContextResult",
    "RagDecisionReason",
    "RagDocument",
    "RagDocumentChanges",
    "RagError",
    "RagIndexReadiness",
    "RagIndexStatus",
    "RagIngestionFailure",
    "RagIngestionManager",
    "RagIngestionOperation",
    "RagIngestionProgress",
    "RagIngestionReason",
    "RagIngestionState",
    "RagNoContextReason",
    "RagObservabilityOptions",
    "RagObservabilityRedactor",
    "RagObservabilityValueKind",
    "RagPolicyStage",
    "RagQuery",
    "RagQueryVisibility",
    "RagRerankCandidate",
    "RagRerankCandidateResult",
    "RagRerankRequest",
    "RagRerankResponse",
    "RagRerankScore",
    "RagReranker",
    "RagRerankingOutcome",
    "RagRerankingReport",
    "RagRetrievalHit",
    "RagRetrievalMode",
    "RagRetrievalProvenance",
    "RagRetrievalResult",
    "RagRetrievalStatistics",
    "RagRetriever",
    "RagValidationError",
    "RerankResponseViolation",
    "RerankerError",
    "RerankerFailurePolicy",
    "RerankerNotApprovedError",
    "RerankerRegistration",
    "RerankerResolver",
    "RerankerResponseError",
    "RerankerTimeoutError",
    "RerankerUnavailableError",
    "RerankingFailedError",
    "RerankingFailureCode",
    "RerankingOptions",
    "RetrievalError",
    "RetrievalErrorCode",
    "RetrievalEvent",
    "RetrievalHitPreview",
    "RetrievalOptions",
    "RetrievalScopeProvider",
    "SchemaMismatchError",
    "SourceFailure",
    "SourceItem",
    "SourceRank",
    "SourceReadResult",
    "SourceSkip",
    "StartupIngestionError",
    "StaticRetrievalScope",
    "StoreHit",
    "StoredDocument",
    "TextChunker",
    "ValidatedRerank",
    "VectorDimensionMismatchError",
    "VectorIndexNotFoundError",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreUnavailableError",
    "add_runiq_rag",
    "estimate_tokens",
    "hookimpl",
    "index_reranker_resolver",
    "normalise_text",
    "parse_lexical_query",
    "reciprocal_rank_fusion",
    "validate_rerank_response",
]


def _origins() -> dict[str, str]:
    """Name -> defining module, read from this file's ``if _TYPE_CHECKING:`` imports."""
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "_TYPE_CHECKING")
    return {
        alias.asname or alias.name: statement.module
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module is not None
        for alias in statement.names
    }


_ORIGINS: dict[str, str] = {}

if not _TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        if not _ORIGINS:
            _ORIGINS.update(_origins())
        module = _ORIGINS.get(name)
        if module is not None:
            value = getattr(_importlib.import_module(module), name)
            globals()[name] = value  # later lookups skip __getattr__
            return value
        if _find_spec(f"{__name__}.{name}") is not None:  # a submodule, as before
            return _importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))

"""runiq.rag.providers: the face for provider authors. Everything public is listed in ``__all__``.

What a plugin that adds an embedding client, a vector store, a lexical index, a reranker, a document
source or a loader needs: the hook marker and the provider registry, the protocols it implements, the
value types they exchange, and the rules every provider applies the same way (``validate_top_k``,
``ensure_compatible``, score normalisation in ``scoring``, metadata filters, the lexical analyzer,
BM25, the indexed text of a chunk). Applications import from :mod:`runiq.rag`; contract suites are in
:mod:`runiq.rag.testing`; errors are :mod:`runiq.errors`.

Names load on first use (PEP 562, see :mod:`runiq.rag._lazy`), so a plugin's entry module that
imports ``hookimpl`` from here does not load the RAG core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from runiq.rag._lazy import lazy_face as _lazy_face

if _TYPE_CHECKING:
    from runiq.plugins.hookspecs import hookimpl
    from runiq.plugins.registry import EmptyOptions, ProviderKind, ProviderRegistry
    from runiq.rag._chunking.context import chunk_indexed_text
    from runiq.rag._documents import ChunkKey, Metadata, MetadataScalar, MetadataValue, RagChunk, RagDocument
    from runiq.rag._embeddings import EmbeddingClient, EmbeddingInputKind, HashingEmbedder
    from runiq.rag._ingestion.operation import RagIngestionOperation, operation_from_record, operation_record
    from runiq.rag._lexical import (
        DEFAULT_ANALYZER,
        AnalysedQuery,
        Analyzer,
        BM25Parameters,
        LexicalOptions,
        LexicalQuery,
        analyse_query,
        bm25_idf,
        bm25_length_norm,
        bm25_term_score,
        parse_lexical_query,
        resolve_stemmer,
    )
    from runiq.rag._lexical.fragments import identifier_words
    from runiq.rag._lexical.options import StemmerName, StopwordSetName
    from runiq.rag._limits import MAX_CANDIDATES
    from runiq.rag._loaders import (
        DocumentLoader,
        DocumentLoadError,
        LoadedDocument,
        LoaderRegistry,
        LoadFailureCode,
        LoadOptions,
        MarkdownBuilder,
        PlainTextLoader,
        decode_text,
        guarded,
        import_when_loading,
        one_line,
        open_zip,
        parser_failures,
        table_lines,
    )
    from runiq.rag._observability.identity import identity_hash
    from runiq.rag._observability.otel import stage_span
    from runiq.rag._registration import ProviderSelection
    from runiq.rag._reranking import (
        MAX_RERANK_CANDIDATES,
        LexicalOverlapReranker,
        RagAnswerability,
        RagRerankCandidate,
        RagRerankCandidateResult,
        RagReranker,
        RagRerankRequest,
        RagRerankResponse,
        RerankerError,
        RerankerResponseError,
        RerankerTimeoutError,
        RerankerUnavailableError,
        RerankResponseViolation,
        ValidatedRerank,
        validate_rerank_response,
    )
    from runiq.rag._retrieval import reciprocal_rank_fusion
    from runiq.rag._retrieval.query import MAX_QUERY_CHARACTERS
    from runiq.rag._sources import (
        DocumentSource,
        ReadChooser,
        SourceFailure,
        SourceItem,
        SourceSkip,
        SourceStamp,
        SourceUnchanged,
        StampedSource,
    )
    from runiq.rag._stores import (
        BulkDocumentWriter,
        BulkLoading,
        DistanceMetric,
        DocumentCounter,
        DocumentStamps,
        DocumentWrite,
        HealthCheck,
        IndexSpec,
        InMemoryVectorStore,
        LexicalSearch,
        StoredDocument,
        StoreHealth,
        StoreHit,
        VectorStore,
        scoring,
    )
    from runiq.rag._stores.base import IngestionCoordinator, IngestionHistory, ensure_compatible, validate_top_k
    from runiq.rag._stores.claims import PartResult, SharedRun, WorkClaims
    from runiq.rag._stores.filter_tree import And, Compare, Comparison, Exists, FilterNode, Member, Not, Or
    from runiq.rag._stores.filter_values import DATE_PATTERN, DATETIME_PATTERN, FilterValue, ValueKind
    from runiq.rag._stores.filters import FilterSpec, matches, parse_filter, validate_filters

__all__ = [
    "AnalysedQuery",
    "Analyzer",
    "And",
    "BM25Parameters",
    "BulkDocumentWriter",
    "BulkLoading",
    "ChunkKey",
    "Compare",
    "Comparison",
    "DATETIME_PATTERN",
    "DATE_PATTERN",
    "DEFAULT_ANALYZER",
    "DistanceMetric",
    "DocumentCounter",
    "DocumentLoadError",
    "DocumentLoader",
    "DocumentSource",
    "DocumentStamps",
    "DocumentWrite",
    "EmbeddingClient",
    "EmbeddingInputKind",
    "EmptyOptions",
    "Exists",
    "FilterNode",
    "FilterSpec",
    "FilterValue",
    "HashingEmbedder",
    "HealthCheck",
    "InMemoryVectorStore",
    "IndexSpec",
    "IngestionCoordinator",
    "IngestionHistory",
    "LexicalOptions",
    "LexicalOverlapReranker",
    "LexicalQuery",
    "LexicalSearch",
    "LoadFailureCode",
    "LoadOptions",
    "LoadedDocument",
    "LoaderRegistry",
    "MAX_CANDIDATES",
    "MAX_QUERY_CHARACTERS",
    "MAX_RERANK_CANDIDATES",
    "MarkdownBuilder",
    "Member",
    "Metadata",
    "MetadataScalar",
    "MetadataValue",
    "Not",
    "Or",
    "PartResult",
    "PlainTextLoader",
    "ProviderKind",
    "ProviderRegistry",
    "ProviderSelection",
    "RagAnswerability",
    "RagChunk",
    "RagDocument",
    "RagIngestionOperation",
    "RagRerankCandidate",
    "RagRerankCandidateResult",
    "RagRerankRequest",
    "RagRerankResponse",
    "RagReranker",
    "ReadChooser",
    "RerankResponseViolation",
    "RerankerError",
    "RerankerResponseError",
    "RerankerTimeoutError",
    "RerankerUnavailableError",
    "SharedRun",
    "SourceFailure",
    "SourceItem",
    "SourceSkip",
    "SourceStamp",
    "SourceUnchanged",
    "StampedSource",
    "StemmerName",
    "StopwordSetName",
    "StoreHealth",
    "StoreHit",
    "StoredDocument",
    "ValidatedRerank",
    "ValueKind",
    "VectorStore",
    "WorkClaims",
    "analyse_query",
    "bm25_idf",
    "bm25_length_norm",
    "bm25_term_score",
    "chunk_indexed_text",
    "decode_text",
    "ensure_compatible",
    "guarded",
    "hookimpl",
    "identifier_words",
    "identity_hash",
    "import_when_loading",
    "matches",
    "one_line",
    "open_zip",
    "operation_from_record",
    "operation_record",
    "parse_filter",
    "parse_lexical_query",
    "parser_failures",
    "reciprocal_rank_fusion",
    "resolve_stemmer",
    "scoring",
    "stage_span",
    "table_lines",
    "validate_filters",
    "validate_rerank_response",
    "validate_top_k",
]

if not _TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute
    __getattr__, __dir__ = _lazy_face(__name__, __file__, __all__, globals())

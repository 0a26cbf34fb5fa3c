"""The retriever facade: dispatch by mode, map store hits to results with provenance, fuse hybrids."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runiq.rag._errors import (
    RagError,
    RagValidationError,
    RetrievalError,
    RetrievalErrorCode,
    VectorIndexNotFoundError,
    chained,
    first_leaf,
    translated,
)
from runiq.rag._lexical.query import parse_lexical_query
from runiq.rag._observability.events import ObservabilitySink, RetrievalEvent, RetrievalHitPreview, emit
from runiq.rag._observability.identity import identity_hash
from runiq.rag._observability.otel import TelemetrySpan, fusion_span, record_metrics, retrieval_span, source_span
from runiq.rag._observability.projection import ObservabilityProjector
from runiq.rag._retrieval.fusion import fused_ranking
from runiq.rag._retrieval.query import RagQuery, RagRetrievalMode
from runiq.rag._retrieval.results import (
    RagRetrievalHit,
    RagRetrievalProvenance,
    RagRetrievalResult,
    RagRetrievalStatistics,
    SourceRank,
)
from runiq.rag._retrieval.scope import RetrievalScopeProvider, ScopeConflict, merge_scope
from runiq.rag._stores.base import LexicalSearch, StoreHit

if TYPE_CHECKING:
    from runiq.rag._runtime import IndexResources, IndexRuntime

__all__ = ["RagRetriever", "RetrievalOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievalOptions:
    """``hybrid_candidate_multiplier``: each hybrid source contributes ``top_k * multiplier`` candidates."""

    hybrid_candidate_multiplier: int = 4

    def __post_init__(self) -> None:
        if self.hybrid_candidate_multiplier < 1:
            raise RagValidationError("hybrid_candidate_multiplier must be at least 1.")


class RagRetriever:
    """Retrieves candidates from a registered index. ``top_k`` limits candidates; it accepts nothing."""

    def __init__(
        self,
        runtime: IndexRuntime,
        options: RetrievalOptions | None = None,
        *,
        projector: ObservabilityProjector | None = None,
        sinks: Sequence[ObservabilitySink] = (),
        scope: RetrievalScopeProvider | None = None,
    ) -> None:
        self._scope = scope
        self._runtime = runtime
        self._options = options or RetrievalOptions()
        self._projector = projector or ObservabilityProjector()
        self._sinks = tuple(sinks)

    async def retrieve(self, query: RagQuery) -> RagRetrievalResult:
        with retrieval_span(query.index_name) as span:
            return await self._retrieve(query, span)

    async def _retrieve(self, query: RagQuery, span: TelemetrySpan) -> RagRetrievalResult:
        started = time.perf_counter()
        resources = await self._runtime.get(query.index_name)
        mode = query.mode or resources.definition.default_mode
        try:
            scoped = self._scoped(query)
            hits: list[RagRetrievalHit] = []
            stats = RagRetrievalStatistics()
            if scoped is not None:  # None: the query contradicts its scope, so nothing it may see matches
                hits, stats = await self._dispatch(resources, scoped, mode)
        except RagError as exc:
            code = exc.code.value if isinstance(exc, RetrievalError) else type(exc).__name__
            self._emit(query, mode, started, span, error_code=code)
            raise
        duration = time.perf_counter() - started
        self._emit(query, mode, started, span, hits=hits, stats=stats)
        return RagRetrievalResult(
            index_name=query.index_name, mode=mode, hits=tuple(hits), statistics=stats, duration_seconds=duration
        )

    def _scoped(self, query: RagQuery) -> RagQuery | None:
        if self._scope is None:
            return query
        try:
            filters = merge_scope(query.filters, self._scope.scope_for(query))
        except ScopeConflict:
            return None
        return dataclasses.replace(query, filters=filters)

    def _emit(
        self,
        query: RagQuery,
        mode: RagRetrievalMode,
        started: float,
        span: TelemetrySpan,
        *,
        hits: Sequence[RagRetrievalHit] = (),
        stats: RagRetrievalStatistics | None = None,
        error_code: str | None = None,
    ) -> None:
        stats = stats or RagRetrievalStatistics()
        event = RetrievalEvent(
            event="retrieval.failed" if error_code else "retrieval.completed",
            index_name=query.index_name,
            mode=mode.value,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            hit_count=len(hits),
            semantic_candidates=stats.semantic_candidates,
            lexical_candidates=stats.lexical_candidates,
            fused_candidates=stats.fused_candidates,
            error_code=error_code,
            query=self._projector.query(query.text),
            hits=tuple(self._preview(hit) for hit in hits) if self._projector.options.content_preview.enabled else (),
        )
        emit(event, self._sinks)
        span.describe(event)
        record_metrics(event)

    def _preview(self, hit: RagRetrievalHit) -> RetrievalHitPreview:
        p = hit.provenance
        return RetrievalHitPreview(
            rank=hit.rank,
            identity=identity_hash(hit.document_id, hit.chunk_id),
            raw_score=hit.raw_score,
            relevance=hit.relevance,
            semantic_rank=p.semantic.rank if p.semantic else None,
            lexical_rank=p.lexical.rank if p.lexical else None,
            preview=self._projector.preview(hit.content, selected=True),
            metadata=self._projector.metadata(hit.metadata),
        )

    async def _dispatch(
        self, resources: IndexResources, query: RagQuery, mode: RagRetrievalMode
    ) -> tuple[list[RagRetrievalHit], RagRetrievalStatistics]:
        if mode is RagRetrievalMode.LEXICAL:
            lexical = await self._lexical(_require_lexical(resources, query.index_name), query, query.top_k)
            hits = [_lexical_hit(hit, rank) for rank, hit in enumerate(lexical, start=1)]
            return hits, RagRetrievalStatistics(lexical_candidates=len(lexical))
        if resources.embedder is None:
            raise RagValidationError(
                f"RAG index '{query.index_name}' has no embedding provider; semantic and hybrid retrieval need one."
            )
        if mode is RagRetrievalMode.SEMANTIC:
            semantic = await self._semantic(resources, query, query.top_k)
            hits = [_semantic_hit(hit, rank) for rank, hit in enumerate(semantic, start=1)]
            return hits, RagRetrievalStatistics(semantic_candidates=len(semantic))
        return await self._hybrid(resources, query)

    async def _hybrid(
        self, resources: IndexResources, query: RagQuery
    ) -> tuple[list[RagRetrievalHit], RagRetrievalStatistics]:
        depth = query.hybrid_depth(self._options.hybrid_candidate_multiplier)
        store = _require_lexical(resources, query.index_name)
        # Both sources run concurrently; if either fails the TaskGroup cancels the other and the
        # whole request fails: there is no silent fallback to one source.
        semantic, lexical = await translated(lambda: self._both(resources, store, query, depth), first_leaf)
        sem_by_key = {h.key: h for h in semantic}
        lex_by_key = {h.key: h for h in lexical}
        with fusion_span(query.index_name) as span:
            fused = fused_ranking(list(sem_by_key), list(lex_by_key))
            span.counts(fused_candidates=len(fused))
        hits = []
        for fused_rank, candidate in enumerate(fused.candidates(query.top_k), start=1):
            sem_rank, lex_rank = candidate.ranks
            sem = sem_by_key.get(candidate.key)
            lex = lex_by_key.get(candidate.key)
            provenance = RagRetrievalProvenance(
                mode=RagRetrievalMode.HYBRID,
                semantic=_source(sem, sem_rank),
                lexical=_source(lex, lex_rank),
                fused_score=candidate.score,
                fused_rank=fused_rank,
            )
            # The semantic hit, when there is one, carries the vector score semantics; else the lexical one.
            source = sem if sem is not None else lex
            assert source is not None
            hits.append(_hit(source, fused_rank, provenance, semantic_scores=sem is not None))
        stats = RagRetrievalStatistics(
            semantic_candidates=len(semantic), lexical_candidates=len(lexical), fused_candidates=len(fused)
        )
        return hits, stats

    async def _both(
        self, resources: IndexResources, store: LexicalSearch, query: RagQuery, depth: int
    ) -> tuple[list[StoreHit], list[StoreHit]]:
        async with asyncio.TaskGroup() as group:
            # The lexical search usually takes longer: it goes first, so its first statement is on its way
            # while the query is embedded.
            lexical = group.create_task(self._lexical(store, query, depth))
            semantic = group.create_task(self._semantic(resources, query, depth))
        return semantic.result(), lexical.result()

    async def _semantic(self, resources: IndexResources, query: RagQuery, depth: int) -> list[StoreHit]:
        embedder = resources.embedder
        assert embedder is not None
        index_name = query.index_name
        with source_span("semantic", index_name, depth) as span:
            vector = await translated(
                lambda: embedder.embed_query(query.text), _failed(RetrievalErrorCode.EMBEDDING_FAILED, index_name)
            )
            hits = await translated(
                lambda: resources.store.search(index_name, vector, top_k=depth, filters=query.filters),
                _failed(RetrievalErrorCode.VECTOR_STORE_QUERY_FAILED, index_name, passed_through=_STORE_VERDICTS),
            )
            span.counts(candidates=len(hits))
        return hits

    async def _lexical(self, store: LexicalSearch, query: RagQuery, depth: int) -> list[StoreHit]:
        parsed = parse_lexical_query(query.text)
        with source_span("lexical", query.index_name, depth) as span:
            hits = await translated(
                lambda: store.lexical_search(query.index_name, parsed, top_k=depth, filters=query.filters),
                _failed(RetrievalErrorCode.LEXICAL_QUERY_FAILED, query.index_name, passed_through=_STORE_VERDICTS),
            )
            span.counts(candidates=len(hits))
        return hits


# A store's own verdict on the request (a bad filter, an index never ingested) reaches the caller as is.
_STORE_VERDICTS = (RagValidationError, VectorIndexNotFoundError)


def _failed(
    code: RetrievalErrorCode, index_name: str, *, passed_through: tuple[type[Exception], ...] = ()
) -> Callable[[Exception], BaseException]:
    """Translate a source's failure into a content-free :class:`RetrievalError` that names its class.

    A runiq error from the source (a ``ProviderTimeoutError``) stays as ``__cause__`` when nothing
    foreign is chained to it; anything else, whose text may echo the query, is released.
    """

    def translate(exc: Exception) -> BaseException:
        if isinstance(exc, passed_through):
            return exc
        return chained(RetrievalError(code, index_name, type(exc).__name__), exc)

    return translate


def _require_lexical(resources: IndexResources, index_name: str) -> LexicalSearch:
    store = resources.store
    if not isinstance(store, LexicalSearch):
        raise RetrievalError(RetrievalErrorCode.LEXICAL_NOT_SUPPORTED, index_name)
    return store


def _source(hit: StoreHit | None, rank: int | None) -> SourceRank | None:
    if hit is None or rank is None:
        return None
    return SourceRank(rank=rank, raw_score=hit.raw_score, metric=hit.metric)


def _hit(hit: StoreHit, rank: int, provenance: RagRetrievalProvenance, *, semantic_scores: bool) -> RagRetrievalHit:
    return RagRetrievalHit(
        document_id=hit.document_id,
        chunk_id=hit.chunk_id,
        content=hit.content,
        metadata=hit.metadata,
        rank=rank,
        raw_score=hit.raw_score if semantic_scores else None,
        metric=hit.metric if semantic_scores else None,
        higher_is_better=hit.higher_is_better if semantic_scores else None,
        relevance=hit.relevance if semantic_scores else None,
        provenance=provenance,
    )


def _semantic_hit(hit: StoreHit, rank: int) -> RagRetrievalHit:
    provenance = RagRetrievalProvenance(mode=RagRetrievalMode.SEMANTIC, semantic=_source(hit, rank))
    return _hit(hit, rank, provenance, semantic_scores=True)


def _lexical_hit(hit: StoreHit, rank: int) -> RagRetrievalHit:
    provenance = RagRetrievalProvenance(mode=RagRetrievalMode.LEXICAL, lexical=_source(hit, rank))
    return _hit(hit, rank, provenance, semantic_scores=False)

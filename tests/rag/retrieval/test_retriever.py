"""RagRetriever through a host: modes, provenance, fusion, statistics, candidate depth and failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from runiq.errors import VectorIndexNotFoundError
from runiq.hosting import Host
from runiq.rag import (
    HashingEmbedding,
    IndexNotFoundError,
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    RagValidationError,
    RetrievalError,
    RetrievalErrorCode,
)
from runiq.rag._embeddings.base import FloatMatrix, FloatVector
from runiq.rag._limits import MAX_CANDIDATES
from runiq.rag.providers import (
    DistanceMetric,
    EmbeddingInputKind,
    HashingEmbedder,
    InMemoryVectorStore,
    LexicalQuery,
    StoreHit,
)
from runiq.rag.testing import FailingEmbedder

SEMANTIC, LEXICAL, HYBRID = RagRetrievalMode.SEMANTIC, RagRetrievalMode.LEXICAL, RagRetrievalMode.HYBRID

CORPUS = {
    "hr": ("Policy POL-HR-014 covers remote work for every employee.", "hr"),
    "code": ("The IRagRetriever interface lives in filename.cs and fails with CS1503.", "eng"),
    "snake": ("Call snake_case_name before the handler runs.", "eng"),
    "phrase": ("hybrid retrieval preserves exact phrase order in results", "eng"),
    "agents": ("Configure agents with UseRag and observe RagSearchCompleted events.", "eng"),
    "travel": ("Unrelated text about travel expenses and receipts for remote trips.", "finance"),
    "remote": ("Remote work needs a manager approval and a remote work agreement.", "hr"),
}


def _documents(corpus: Mapping[str, tuple[str, str]] = CORPUS) -> list[RagDocument]:
    return [RagDocument(document_id=k, content=text, metadata={"team": team}) for k, (text, team) in corpus.items()]


class RecordingStore(InMemoryVectorStore):
    """Counts vector and lexical searches and records the top_k each was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0
        self.lexical_searches = 0
        self.top_ks: list[int] = []

    async def search(self, index_name: str, vector: FloatVector, **kwargs: Any) -> list[StoreHit]:
        self.searches += 1
        self.top_ks.append(kwargs["top_k"])
        return await super().search(index_name, vector, **kwargs)

    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        self.lexical_searches += 1
        self.top_ks.append(kwargs["top_k"])
        return await super().lexical_search(index_name, query, **kwargs)


class FailingLexicalStore(InMemoryVectorStore):
    """Vector search works; lexical search raises an error that echoes the query."""

    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend exploded on {query.text}")


class FailingVectorStore(InMemoryVectorStore):
    """Lexical search works; vector search raises."""

    async def search(self, index_name: str, vector: FloatVector, **kwargs: Any) -> list[StoreHit]:
        raise ConnectionError("vector backend down")


class VectorOnlyStore:
    """A store without the lexical capability (delegates the VectorStore protocol only)."""

    def __init__(self) -> None:
        self._inner = InMemoryVectorStore()
        self.store_kind = "vector-only"

    async def ensure_index(self, spec: Any) -> None:
        await self._inner.ensure_index(spec)

    async def replace_document(self, *args: Any) -> None:
        await self._inner.replace_document(*args)

    async def delete_documents(self, index_name: str, document_ids: Sequence[str]) -> int:
        return await self._inner.delete_documents(index_name, document_ids)

    async def document_hashes(self, index_name: str, document_ids: Sequence[str] | None = None) -> Mapping[str, str]:
        return await self._inner.document_hashes(index_name, document_ids)

    async def document_id_page(self, index_name: str, *, after: str | None, limit: int) -> Sequence[str]:
        return await self._inner.document_id_page(index_name, after=after, limit=limit)

    async def search(self, index_name: str, vector: FloatVector, **kwargs: Any) -> list[StoreHit]:
        return await self._inner.search(index_name, vector, **kwargs)

    async def count(self, index_name: str) -> int:
        return await self._inner.count(index_name)


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.query_calls = 0
        self.document_calls = 0

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if kind is EmbeddingInputKind.QUERY:
            self.query_calls += 1
        else:
            self.document_calls += 1
        return self.embed_sync(texts)


async def _ingested(host: Host, name: str = "docs") -> Host:
    operation = await host.services.get(RagIngestionManager).run(name)
    assert operation.state is RagIngestionState.COMPLETED
    return host


Retrieve = Callable[..., Any]


@pytest.fixture
async def started(index_host: Callable[..., Host]) -> AsyncIterator[Callable[..., Any]]:
    """``await started(configure_index, **providers)`` -> a started, ingested host (stopped afterwards)."""
    hosts: list[Host] = []

    async def start(configure: Callable[[Any], object], **providers: Any) -> Host:
        host = index_host(configure, **providers)
        await host.start()
        hosts.append(host)
        return await _ingested(host)

    yield start
    for host in hosts:
        await host.stop()


def _retriever(host: Host) -> Retrieve:
    retriever = host.services.get(RagRetriever)

    async def retrieve(text: str, mode: RagRetrievalMode | None = None, **kwargs: Any) -> Any:
        return await retriever.retrieve(RagQuery(index_name="docs", text=text, mode=mode, **kwargs))

    return retrieve


def _standard(embedder: str | None = None, store: str = "in-memory", **extra: Any) -> Callable[[Any], object]:
    def configure(index: Any) -> object:
        index.use_documents(_documents())
        if embedder is None:
            index.use_embedding(HashingEmbedding(dimensions=64))
        else:
            index.use_embedding(embedder)
        if store == "in-memory":
            index.use_in_memory_vector_store(extra.get("metric", DistanceMetric.COSINE))
        else:
            index.use_vector_store(store)
        return index

    return configure


@pytest.fixture
async def retrieve(started: Callable[..., Any]) -> Retrieve:
    return _retriever(await started(_standard()))


# -- semantic --------------------------------------------------------------------------------


async def test_mode_omitted_means_semantic(retrieve: Retrieve) -> None:
    """Without a mode the query runs semantically, with semantic provenance and score semantics."""
    result = await retrieve("remote work agreement")
    assert result.mode is SEMANTIC
    assert result.hits
    for position, hit in enumerate(result.hits, start=1):
        assert hit.rank == position
        assert hit.metric == "cosine-similarity" and hit.higher_is_better is True
        assert hit.relevance == pytest.approx((hit.raw_score + 1) / 2)
        assert hit.provenance.mode is SEMANTIC
        assert hit.provenance.semantic is not None and hit.provenance.semantic.rank == position
        assert hit.provenance.semantic.raw_score == hit.raw_score
        assert hit.provenance.lexical is None and hit.provenance.fused_score is None
        assert hit.provenance.fused_rank is None
    assert [h.raw_score for h in result.hits] == sorted((h.raw_score for h in result.hits), reverse=True)
    assert result.statistics.semantic_candidates == len(result.hits)
    assert result.statistics.lexical_candidates is None and result.statistics.fused_candidates is None


async def test_semantic_top_k_limits_candidates(retrieve: Retrieve) -> None:
    """top_k bounds the number of semantic hits."""
    assert len((await retrieve("remote work", SEMANTIC, top_k=2)).hits) == 2
    assert len((await retrieve("remote work", SEMANTIC, top_k=50)).hits) == len(CORPUS)


async def test_hits_carry_content_and_metadata(retrieve: Retrieve) -> None:
    """Each hit has its chunk content, chunk id and document metadata."""
    hit = (await retrieve("POL-HR-014", SEMANTIC, top_k=1)).hits[0]
    assert hit.document_id == "hr" and hit.chunk_id == "hr#0"
    assert hit.content == CORPUS["hr"][0]
    assert hit.metadata["team"] == "hr"
    assert hit.key == (hit.document_id, hit.chunk_id)


@pytest.mark.parametrize(
    ("metric", "name", "higher"),
    [(DistanceMetric.EUCLIDEAN, "euclidean-distance", False), (DistanceMetric.DOT_PRODUCT, "dot-product", True)],
)
async def test_semantic_direction_and_relevance_follow_the_metric(
    started: Callable[..., Any], metric: DistanceMetric, name: str, higher: bool
) -> None:
    """Euclidean hits are lower-is-better with 1/(1+raw) relevance; dot product has relevance None."""
    retrieve = _retriever(await started(_standard(metric=metric)))
    for mode in (SEMANTIC, HYBRID):
        hits = [h for h in (await retrieve("remote work", mode)).hits if h.raw_score is not None]
        assert hits
        assert all(h.metric == name and h.higher_is_better is higher for h in hits)
        if metric is DistanceMetric.EUCLIDEAN:
            assert all(h.relevance == pytest.approx(1 / (1 + h.raw_score)) for h in hits)
        else:
            assert all(h.relevance is None for h in hits)
    raws = [h.raw_score for h in (await retrieve("remote work", SEMANTIC)).hits]
    assert raws == sorted(raws, reverse=higher)


# -- lexical ---------------------------------------------------------------------------------


IDENTIFIERS = [
    ("CS1503", "code"),
    ("POL-HR-014", "hr"),
    ("IRagRetriever", "code"),
    ("UseRag", "agents"),
    ("RagSearchCompleted", "agents"),
    ("filename.cs", "code"),
    ("snake_case_name", "snake"),
]


@pytest.mark.parametrize(("text", "expected"), IDENTIFIERS)
async def test_lexical_mode_finds_identifiers(retrieve: Retrieve, text: str, expected: str) -> None:
    """Identifiers rank their chunk first; lexical hits have no semantic fields and lexical rank/raw score."""
    result = await retrieve(text, LEXICAL)
    assert result.mode is LEXICAL
    first = result.hits[0]
    assert first.document_id == expected
    for position, hit in enumerate(result.hits, start=1):
        assert (hit.raw_score, hit.metric, hit.higher_is_better, hit.relevance) == (None, None, None, None)
        assert hit.provenance.mode is LEXICAL and hit.provenance.semantic is None
        assert hit.provenance.lexical is not None
        assert hit.provenance.lexical.rank == position and hit.provenance.lexical.raw_score > 0
        assert hit.provenance.lexical.metric == "bm25"
    assert result.statistics.lexical_candidates == len(result.hits)
    assert result.statistics.semantic_candidates is None


@pytest.mark.parametrize(("text", "expected"), IDENTIFIERS)
async def test_hybrid_mode_finds_identifiers(retrieve: Retrieve, text: str, expected: str) -> None:
    """In hybrid mode the identifier's chunk is first and was ranked first lexically."""
    first = (await retrieve(text, HYBRID)).hits[0]
    assert first.document_id == expected
    assert first.provenance.lexical is not None and first.provenance.lexical.rank == 1


async def test_quoted_phrase_matches_only_in_order(retrieve: Retrieve) -> None:
    """'"exact phrase order"' finds the phrase chunk; '"phrase exact order"' finds nothing lexically."""
    assert [h.document_id for h in (await retrieve('"exact phrase order"', LEXICAL)).hits] == ["phrase"]
    assert (await retrieve('"phrase exact order"', LEXICAL)).hits == ()


async def test_quoted_phrase_in_hybrid_mode(retrieve: Retrieve) -> None:
    """Hybrid: the phrase chunk is first with a lexical rank; a reversed phrase contributes no lexical hits."""
    hits = (await retrieve('"exact phrase order"', HYBRID)).hits
    assert hits[0].document_id == "phrase" and hits[0].provenance.lexical is not None
    assert [h.document_id for h in hits if h.provenance.lexical is not None] == ["phrase"]
    reversed_hits = (await retrieve('"phrase exact order"', HYBRID)).hits
    assert reversed_hits and all(h.provenance.lexical is None for h in reversed_hits)


@pytest.mark.parametrize(
    "text", ['"unbalanced', "!!! ???", '""', "\x00\x07 control", "word " * 3000, '"a" "b', "\u202e\u200b"]
)
@pytest.mark.parametrize("mode", [LEXICAL, HYBRID])
async def test_hostile_query_text_never_raises(retrieve: Retrieve, text: str, mode: RagRetrievalMode) -> None:
    """Odd user text returns results (possibly none) instead of raising."""
    result = await retrieve(text, mode)
    assert result.mode is mode


async def test_lexical_works_without_an_embedding_provider(started: Callable[..., Any]) -> None:
    """An index with no embedding ingests and answers lexical queries; mode omitted uses its LEXICAL default."""
    host = await started(
        lambda index: index.use_documents(_documents()).use_in_memory_vector_store().use_default_mode(LEXICAL)
    )
    retrieve = _retriever(host)
    result = await retrieve("CS1503")
    assert result.mode is LEXICAL
    assert result.hits[0].document_id == "code"
    status = host.services.get(RagIngestionManager).status("docs")
    assert status.last_operation is not None
    assert status.last_operation.progress.produced_embeddings == 0
    assert status.last_operation.progress.produced_chunks == len(CORPUS)
    for mode in (SEMANTIC, HYBRID):
        with pytest.raises(RagValidationError):
            await retrieve("CS1503", mode)


# -- hybrid ----------------------------------------------------------------------------------


async def test_hybrid_single_chunk_provenance_and_counts(started: Callable[..., Any]) -> None:
    """One chunk found by both: one query embedding, ranks 1/1/1, RRF 2/61, semantic raw and metric kept."""
    embedder = CountingEmbedder()
    host = await started(
        lambda index: (
            index.use_documents([RagDocument(document_id="only", content="dependency injection container")])
            .use_embedding("counting")
            .use_in_memory_vector_store()
        ),
        embeddings={"counting": embedder},
    )
    result = await _retriever(host)('"dependency injection"', HYBRID)
    assert embedder.query_calls == 1
    (hit,) = result.hits
    provenance = hit.provenance
    assert provenance.mode is HYBRID
    assert hit.rank == provenance.fused_rank == 1
    assert provenance.semantic is not None and provenance.semantic.rank == 1
    assert provenance.lexical is not None and provenance.lexical.rank == 1
    assert provenance.fused_score == pytest.approx(2 / 61, abs=1e-12)
    assert hit.raw_score == provenance.semantic.raw_score and hit.metric == "cosine-similarity"
    assert hit.relevance == pytest.approx((hit.raw_score + 1) / 2)
    stats = result.statistics
    assert (stats.semantic_candidates, stats.lexical_candidates, stats.fused_candidates) == (1, 1, 1)


async def test_every_hybrid_hit_has_consistent_provenance(retrieve: Retrieve) -> None:
    """Each hybrid hit's source ranks and raw scores are those the single-source queries report, and
    its fused score is the sum of 1/(60 + rank) over the sources that found it."""
    query = "remote work CS1503 policy"
    depth = 20
    hybrid = await retrieve(query, HYBRID, candidate_depth=depth)
    semantic = {h.key: h for h in (await retrieve(query, SEMANTIC, top_k=depth)).hits}
    lexical = {h.key: h for h in (await retrieve(query, LEXICAL, top_k=depth)).hits}
    assert hybrid.hits
    for position, hit in enumerate(hybrid.hits, start=1):
        p = hit.provenance
        assert hit.rank == p.fused_rank == position
        assert p.semantic is not None or p.lexical is not None
        expected = 0.0
        if p.semantic is not None:
            assert p.semantic.rank == semantic[hit.key].rank
            assert p.semantic.raw_score == semantic[hit.key].raw_score
            assert hit.raw_score == p.semantic.raw_score and hit.relevance is not None
            expected += 1 / (60 + p.semantic.rank)
        else:
            assert hit.key not in semantic
        if p.lexical is not None:
            assert p.lexical.rank == lexical[hit.key].provenance.lexical.rank
            assert p.lexical.raw_score == lexical[hit.key].provenance.lexical.raw_score
            expected += 1 / (60 + p.lexical.rank)
        else:
            assert hit.key not in lexical
        if p.semantic is None:
            assert (hit.raw_score, hit.metric, hit.higher_is_better, hit.relevance) == (None, None, None, None)
        assert p.fused_score == pytest.approx(expected)
    scores = [h.provenance.fused_score for h in hybrid.hits]
    assert scores == sorted(scores, reverse=True)


class TravelEmbedder(HashingEmbedder):
    """Every query points at "travel" chunks; other chunks are orthogonal to it (ties by identity)."""

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, 0 if kind is EmbeddingInputKind.QUERY or "travel" in text else 1] = 1.0
        return out


async def test_lexical_only_hybrid_hit_has_no_semantic_fields(started: Callable[..., Any]) -> None:
    """A chunk found only lexically has raw_score/metric/direction/relevance None; a semantic-only one has
    no lexical provenance; fused scores are 1/61 each and the semantic one ranks first on the tie."""
    host = await started(_standard("travel"), embeddings={"travel": TravelEmbedder(8)})
    result = await _retriever(host)("CS1503", HYBRID, top_k=10, candidate_depth=1)
    by_id = {h.document_id: h for h in result.hits}
    assert [h.document_id for h in result.hits] == ["travel", "code"]
    code, travel = by_id["code"], by_id["travel"]
    assert code.provenance.semantic is None and code.provenance.lexical is not None
    assert (code.raw_score, code.metric, code.higher_is_better, code.relevance) == (None, None, None, None)
    assert travel.provenance.lexical is None and travel.provenance.semantic is not None
    assert travel.raw_score == pytest.approx(1.0) and travel.metric == "cosine-similarity"
    assert code.provenance.fused_score == travel.provenance.fused_score == pytest.approx(1 / 61)
    assert (code.provenance.fused_rank, travel.provenance.fused_rank) == (2, 1)


async def test_top_k_truncates_after_fusion_and_statistics_count_before(retrieve: Retrieve) -> None:
    """top_k limits the fused list; statistics keep the per-source and fused counts before truncation."""
    full = await retrieve("remote work policy", HYBRID, top_k=7)
    cut = await retrieve("remote work policy", HYBRID, top_k=2, candidate_depth=7)
    assert len(cut.hits) == 2
    assert [h.key for h in cut.hits] == [h.key for h in full.hits[:2]]
    stats = cut.statistics
    assert stats.semantic_candidates == 7
    assert stats.fused_candidates is not None and stats.fused_candidates > 2
    assert stats.fused_candidates == len({h.key for h in full.hits})


async def test_hybrid_candidate_depth_defaults_to_a_multiple_of_top_k(retrieve: Retrieve) -> None:
    """Each hybrid source contributes top_k * 4 candidates unless candidate_depth overrides it."""
    default = await retrieve("remote work", HYBRID, top_k=1)
    assert default.statistics.semantic_candidates == 4
    assert len(default.hits) == 1
    override = await retrieve("remote work", HYBRID, top_k=1, candidate_depth=2)
    assert override.statistics.semantic_candidates == 2
    assert override.statistics.lexical_candidates is not None and override.statistics.lexical_candidates <= 2


@pytest.mark.parametrize(("mode", "searches", "lexical"), [(SEMANTIC, 1, 0), (LEXICAL, 0, 1), (HYBRID, 1, 1)])
async def test_each_mode_calls_exactly_its_sources(
    started: Callable[..., Any], mode: RagRetrievalMode, searches: int, lexical: int
) -> None:
    """Semantic: vector search only; lexical: lexical only and no embedding; hybrid: one of each."""
    store, embedder = RecordingStore(), CountingEmbedder()
    host = await started(
        _standard("counting", "recording"), embeddings={"counting": embedder}, stores={"recording": store}
    )
    await _retriever(host)("remote work", mode)
    assert (store.searches, store.lexical_searches) == (searches, lexical)
    assert embedder.query_calls == (0 if mode is LEXICAL else 1)


async def test_hybrid_runs_both_sources_concurrently(started: Callable[..., Any]) -> None:
    """The query embedding and the lexical search overlap in time (each waits for the other to start)."""
    embedding_started, lexical_started = asyncio.Event(), asyncio.Event()

    class Embedder(HashingEmbedder):
        async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
            if kind is EmbeddingInputKind.QUERY:
                embedding_started.set()
                await asyncio.wait_for(lexical_started.wait(), 2)
            return self.embed_sync(texts)

    class Store(InMemoryVectorStore):
        async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
            lexical_started.set()
            await asyncio.wait_for(embedding_started.wait(), 2)
            return await super().lexical_search(index_name, query, **kwargs)

    host = await started(_standard("probe", "probe"), embeddings={"probe": Embedder(64)}, stores={"probe": Store()})
    result = await _retriever(host)("CS1503", HYBRID)
    assert result.hits[0].document_id == "code"


async def test_filters_apply_in_every_mode(retrieve: Retrieve) -> None:
    """Metadata filters restrict semantic, lexical and hybrid results alike."""
    for mode in (SEMANTIC, LEXICAL, HYBRID):
        result = await retrieve("remote work", mode, filters={"team": "hr"}, top_k=10)
        assert {h.document_id for h in result.hits} == {"hr", "remote"}
        assert all(h.metadata["team"] == "hr" for h in result.hits)


async def test_the_maximum_top_k_is_served_in_every_mode(started: Callable[..., Any]) -> None:
    """top_k = MAX_CANDIDATES is valid everywhere: the hybrid depth (top_k * 4) is capped, not refused."""
    store = RecordingStore()
    retrieve = _retriever(await started(_standard(store="recording"), stores={"recording": store}))
    for mode in (SEMANTIC, LEXICAL, HYBRID):
        result = await retrieve("remote work", mode, top_k=MAX_CANDIDATES)
        assert result.hits, mode
    assert store.top_ks == [MAX_CANDIDATES] * 4  # semantic, lexical, hybrid's two sources


async def test_filters_compare_numbers_by_value_in_every_mode(started: Callable[..., Any]) -> None:
    """A 2024.0 filter finds year 2024; True does not find 1; "2024" does not find 2024."""
    documents = [
        RagDocument(document_id="int", content="remote work policy", metadata={"year": 2024, "flag": 1}),
        RagDocument(document_id="bool", content="remote work rules", metadata={"year": "2024", "flag": True}),
    ]
    retrieve = _retriever(
        await started(
            lambda index: (
                index.use_documents(documents)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_in_memory_vector_store()
            )
        )
    )
    for mode in (SEMANTIC, LEXICAL, HYBRID):
        assert [h.document_id for h in (await retrieve("remote", mode, filters={"year": 2024.0})).hits] == ["int"]
        assert [h.document_id for h in (await retrieve("remote", mode, filters={"flag": True})).hits] == ["bool"]
        assert [h.document_id for h in (await retrieve("remote", mode, filters={"year": "2024"})).hits] == ["bool"]


# -- failures --------------------------------------------------------------------------------


async def test_hybrid_fails_when_embedding_fails(started: Callable[..., Any]) -> None:
    """A failing query embedding fails semantic and hybrid retrieval with EMBEDDING_FAILED; lexical still works."""
    host = await started(_standard("failing"), embeddings={"failing": FailingEmbedder(64, fail_on="BREAK")})
    retrieve = _retriever(host)
    for mode in (SEMANTIC, HYBRID):
        with pytest.raises(RetrievalError) as raised:
            await retrieve("BREAK remote work", mode)
        assert raised.value.code is RetrievalErrorCode.EMBEDDING_FAILED
        assert raised.value.index_name == "docs"
    assert (await retrieve("BREAK remote work", LEXICAL)).hits


async def test_hybrid_fails_when_lexical_search_fails(started: Callable[..., Any]) -> None:
    """A failing lexical source fails hybrid (no semantic-only fallback) while semantic mode still works."""
    host = await started(_standard(store="failing-lexical"), stores={"failing-lexical": FailingLexicalStore()})
    retrieve = _retriever(host)
    for mode in (LEXICAL, HYBRID):
        with pytest.raises(RetrievalError) as raised:
            await retrieve("remote work", mode)
        assert raised.value.code is RetrievalErrorCode.LEXICAL_QUERY_FAILED
        assert raised.value.cause_type == "RuntimeError"
    assert (await retrieve("remote work", SEMANTIC)).hits


async def test_hybrid_fails_when_vector_search_fails(started: Callable[..., Any]) -> None:
    """A failing vector store fails semantic and hybrid with VECTOR_STORE_QUERY_FAILED; lexical still works."""
    host = await started(_standard(store="failing-vector"), stores={"failing-vector": FailingVectorStore()})
    retrieve = _retriever(host)
    for mode in (SEMANTIC, HYBRID):
        with pytest.raises(RetrievalError) as raised:
            await retrieve("remote work", mode)
        assert raised.value.code is RetrievalErrorCode.VECTOR_STORE_QUERY_FAILED
    assert (await retrieve("remote work", LEXICAL)).hits


async def test_store_without_lexical_capability_refuses_lexical_and_hybrid(started: Callable[..., Any]) -> None:
    """A vector-only store answers semantic queries; lexical and hybrid fail with LEXICAL_NOT_SUPPORTED."""
    host = await started(_standard(store="vector-only"), stores={"vector-only": VectorOnlyStore()})
    retrieve = _retriever(host)
    assert (await retrieve("remote work", SEMANTIC)).hits
    for mode in (LEXICAL, HYBRID):
        with pytest.raises(RetrievalError) as raised:
            await retrieve("remote work", mode)
        assert raised.value.code is RetrievalErrorCode.LEXICAL_NOT_SUPPORTED


async def test_unknown_index_is_index_not_found(started: Callable[..., Any]) -> None:
    """Querying an index name that is not registered raises IndexNotFoundError."""
    host = await started(_standard())
    with pytest.raises(IndexNotFoundError):
        await host.services.get(RagRetriever).retrieve(RagQuery(index_name="missing", text="x"))


async def test_never_ingested_index_is_a_clear_error(index_host: Callable[..., Host]) -> None:
    """Before the first ingestion the store has no index: VectorIndexNotFoundError, in every mode."""
    async with index_host(_standard()) as host:
        retrieve = _retriever(host)
        for mode in (SEMANTIC, LEXICAL, HYBRID):
            with pytest.raises(VectorIndexNotFoundError):
                await retrieve("remote work", mode)


async def test_empty_index_returns_no_hits(started: Callable[..., Any]) -> None:
    """An ingested index without documents answers every mode with no hits (empty is not an error)."""
    retrieve = _retriever(
        await started(
            lambda index: index.use_documents([]).use_embedding("counting").use_in_memory_vector_store(),
            embeddings={"counting": CountingEmbedder()},
        )
    )
    for mode in (SEMANTIC, LEXICAL, HYBRID):
        assert (await retrieve("remote work", mode)).hits == ()

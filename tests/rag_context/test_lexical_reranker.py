"""The reference lexical-overlap reranker: the contract suite, its documented scoring, and its plugin
registration on a real host (selected per index and resolved by the assembler)."""

from __future__ import annotations

from typing import Any

import pytest

from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexRuntime,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._context import RagContextAssembler, RagContextOptions, RagContextOutcome, RerankingOptions
from runiq.rag._reranking import (
    LexicalOverlapReranker,
    LexicalOverlapReranking,
    RagAnswerability,
    RagRerankCandidate,
    RagRerankRequest,
    RerankerRegistration,
    index_reranker_resolver,
)
from runiq.rag.providers import ProviderKind
from runiq.rag.testing.reranker_contract import RerankerContract

A, N, U = RagAnswerability.ANSWERABLE, RagAnswerability.NOT_ANSWERABLE, RagAnswerability.UNKNOWN


class TestLexicalOverlapContract(RerankerContract):
    @pytest.fixture
    def reranker(self) -> LexicalOverlapReranker:
        return LexicalOverlapReranker()


def request(query: str, *contents: str) -> RagRerankRequest:
    return RagRerankRequest(
        query=query,
        candidates=tuple(
            RagRerankCandidate(document_id=f"d{i}", chunk_id=f"d{i}#0", content=text, original_rank=i)
            for i, text in enumerate(contents, start=1)
        ),
    )


async def scores(query: str, *contents: str, **options: Any) -> list[tuple[float, RagAnswerability]]:
    response = await LexicalOverlapReranker(**options).rerank(request(query, *contents))
    return [(r.relevance, r.answerability) for r in response.candidates]


async def test_relevance_is_the_share_of_query_terms() -> None:
    """'remote work policy': all three terms 1.0, two of three 2/3, none 0 (not answerable)."""
    result = await scores("remote work policy", "The remote work policy.", "Remote work only.", "Parking permits.")
    assert result == [(1.0, A), (pytest.approx(2 / 3), A), (0.0, N)]


async def test_short_words_are_ignored_but_identifiers_are_not() -> None:
    """'is', 'a' are dropped; POL-HR-014 matches whole and by parts, digits always count."""
    terms = LexicalOverlapReranker().terms("Is a POL-HR-014 ok?")
    assert terms == frozenset({"pol-hr-014", "pol", "014"})
    result = await scores("POL-HR-014", "Policy POL-HR-014 applies.", "Version 014 of the form.")
    assert result[0] == (1.0, A)
    assert result[1] == (pytest.approx(1 / 3), U)


async def test_threshold_decides_answerable() -> None:
    """Between zero and the threshold the candidate is unknown; the threshold is an option."""
    assert await scores("remote work policy", "remote only") == [(pytest.approx(1 / 3), U)]
    assert await scores("remote work policy", "remote only", answerable_threshold=0.3) == [(pytest.approx(1 / 3), A)]


async def test_aggregate_answerability() -> None:
    """Any answerable -> answerable; all not answerable -> not answerable; otherwise unknown."""
    reranker = LexicalOverlapReranker()
    assert (await reranker.rerank(request("remote work", "remote work", "cars"))).answerability is A
    assert (await reranker.rerank(request("remote work", "cars", "trains"))).answerability is N
    assert (await reranker.rerank(request("remote work policy", "remote", "cars"))).answerability is U


async def test_a_query_without_terms_gives_no_signal() -> None:
    """Only short words: relevance 0 and unknown, never a false 'not answerable'."""
    reranker = LexicalOverlapReranker()
    response = await reranker.rerank(request("is it ok?", "anything at all"))
    assert [(r.relevance, r.answerability) for r in response.candidates] == [(0.0, U)]
    assert response.answerability is U


def test_options_are_validated() -> None:
    """Threshold in (0, 1], minimum term length 1..32."""
    for bad in ({"answerable_threshold": 0}, {"answerable_threshold": 1.5}, {"minimum_term_length": 0}):
        with pytest.raises(RagConfigurationError) as caught:
            LexicalOverlapReranker(**bad)
        assert caught.value.__context__ is None


DOCUMENTS = [
    RagDocument(document_id="hr", content="Policy POL-HR-014: remote work is allowed three days per week."),
    RagDocument(document_id="travel", content="Travel expenses for remote trips need receipts."),
    RagDocument(document_id="badges", content="Security badges must be worn at all times on site."),
]


def host_with_reranker(selection: Any) -> Any:
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(DOCUMENTS)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_in_memory_vector_store()
                .use_reranker(selection)
            ),
        ),
    )
    return builder


@pytest.mark.parametrize("selection", ["lexical-overlap", LexicalOverlapReranking(answerable_threshold=0.6)])
async def test_registered_as_a_provider_and_resolved_per_index(selection: Any) -> None:
    """The plugin registers 'lexical-overlap'; an index selects it; the assembler resolves and runs it."""
    builder = host_with_reranker(selection)
    assert "lexical-overlap" in builder.providers.names(ProviderKind.RERANKER)
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        runtime = host.services.get(IndexRuntime)
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(runtime)
        )
        query = RagQuery(index_name="docs", text="remote work policy", mode=RagRetrievalMode.LEXICAL, top_k=5)
        result = await assembler.assemble(query, RagContextOptions(reranking=RerankingOptions(enabled=True)))
        assert result.outcome is RagContextOutcome.CONTEXT
        assert result.reranking.provider == "lexical-overlap"
        assert result.context[0].document_id == "hr"
        assert result.context[0].rerank is not None
        assert result.context[0].rerank.answerability is A
        resources = await runtime.get("docs")
        assert isinstance(resources.reranker, LexicalOverlapReranker)
        assert RerankerRegistration(resources.reranker).permitted  # local: no approval needed


def test_unknown_options_are_rejected_at_registration() -> None:
    """The options model forbids unknown keys (registration fails, nothing runs)."""
    with pytest.raises(RagConfigurationError, match="lexical-overlap"):
        host_with_reranker_options(temperature=0.2)


def host_with_reranker_options(**options: Any) -> Any:
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(DOCUMENTS).use_in_memory_vector_store().use_reranker("lexical-overlap", **options)
            ),
        ),
    )
    return builder


async def test_an_index_without_a_reranker_is_unavailable() -> None:
    """The resolver returns None for an index with no reranker: reranker_unavailable, fallback."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda i: (
                i.use_documents(DOCUMENTS).use_in_memory_vector_store().use_default_mode(RagRetrievalMode.LEXICAL)
            ),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(host.services.get(IndexRuntime))
        )
        query = RagQuery(index_name="docs", text="badges", mode=RagRetrievalMode.LEXICAL)
        result = await assembler.assemble(query, RagContextOptions(reranking=RerankingOptions(enabled=True)))
        assert result.reranking.failure_code is not None
        assert result.reranking.failure_code.value == "reranker_unavailable"
        assert result.outcome is RagContextOutcome.CONTEXT

"""Selections, options and registration: validated at once, defaults per backend, no environment read, no I/O."""

from __future__ import annotations

import pytest
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexRuntime,
    ProviderNotFoundError,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._context import RagContextAssembler, RagContextOptions, RagRerankingOutcome, RerankingOptions
from runiq.rag._reranking import RerankingFailureCode, index_reranker_resolver
from runiq.rag.testing.chains import assert_content_free

import runiq_rerank_http.plugin
from runiq_rerank_http import HttpRerankerOptions, HttpReranking, RerankBackend, ScoreMapping


def test_selection_options_and_a_display_name_without_the_url() -> None:
    """Only the options given are passed; the display name shows backend and model, never the address."""
    selection = HttpReranking("tei", base_url="http://reranker.internal:8080/", max_documents_per_request=16)
    assert selection.provider_name == "rerank-http"
    assert selection.provider_options() == {
        "backend": "tei",
        "base_url": "http://reranker.internal:8080/",
        "max_documents_per_request": 16,
    }
    assert selection.display_name == "HTTP reranker (tei)"
    assert HttpReranking(RerankBackend.COHERE).display_name == "HTTP reranker (cohere, rerank-v3.5)"


@pytest.mark.parametrize(
    ("backend", "url", "model", "batch", "mapping"),
    [
        ("cohere", "https://api.cohere.com/v2/rerank", "rerank-v3.5", 1000, ScoreMapping.AS_IS),
        ("jina", "https://api.jina.ai/v1/rerank", "jina-reranker-v2-base-multilingual", 1000, ScoreMapping.AS_IS),
        ("tei", "http://h:1/rerank", None, 32, ScoreMapping.SIGMOID),
        ("infinity", "http://h:1/rerank", None, 1000, ScoreMapping.AS_IS),
        ("vllm", "http://h:1/v1/rerank", None, 1000, ScoreMapping.AS_IS),
    ],
)
def test_backend_defaults(backend, url, model, batch, mapping) -> None:
    """Endpoint, model, batch size (capped at MAX_RERANK_CANDIDATES) and score mapping per backend."""
    base = {"base_url": "http://h:1/"} if backend in ("tei", "infinity", "vllm") else {}
    options = HttpRerankerOptions(backend=backend, **base)
    assert (options.url, options.effective_model, options.batch_size, options.effective_mapping) == (
        url,
        model,
        batch,
        mapping,
    )


def test_a_base_url_prefix_is_kept() -> None:
    """A gateway prefix stays in front of the backend's path (one trailing slash or none)."""
    assert HttpRerankerOptions(backend="tei", base_url="https://gw.example/tei/").url == "https://gw.example/tei/rerank"
    assert HttpRerankerOptions(backend="cohere", base_url="http://proxy:9").url == "http://proxy:9/v2/rerank"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"backend": "bing"}, "backend"),
        ({"backend": "tei"}, "base_url"),
        ({"backend": "vllm", "base_url": "ftp://host"}, "base_url"),
        ({"backend": "tei", "base_url": "https://user:pw@host"}, "base_url"),
        ({"backend": "tei", "base_url": "https://host/?key=pw@"}, "base_url"),
        ({"backend": "cohere", "api_key_env": "NOT A NAME"}, "api_key_env"),
        ({"backend": "cohere", "model": "two words"}, "model"),
        ({"backend": "cohere", "timeout": 0}, "timeout"),
        ({"backend": "cohere", "max_retries": 11}, "max_retries"),
        ({"backend": "cohere", "max_retry_wait": -1}, "max_retry_wait"),
        ({"backend": "cohere", "max_documents_per_request": 1001}, "max_documents_per_request"),
        ({"backend": "cohere", "max_concurrency": 0}, "max_concurrency"),
        ({"backend": "cohere", "score_mapping": "softmax"}, "score_mapping"),
    ],
)
def test_invalid_selections_fail_naming_the_option(kwargs, field) -> None:
    """Bad values fail where the selection is written; the message names the option, never the value."""
    with pytest.raises(RagConfigurationError) as caught:
        HttpReranking(**kwargs)
    assert field in str(caught.value)
    assert "pw@" not in str(caught.value)
    assert caught.value.__context__ is None  # the ValidationError holds the values (a URL with credentials)
    assert_content_free(caught.value, "pw@")


def test_options_are_frozen() -> None:
    options = HttpRerankerOptions(backend="cohere")
    with pytest.raises(ValueError, match="frozen"):
        options.timeout = 1.0  # type: ignore[misc]


def _builder(selection: HttpReranking, *, plugins: list[object]) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=plugins)
    documents = [RagDocument(document_id="a", content="remote work policy"), RagDocument(document_id="b", content="x")]
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(documents)
                .use_embedding(HashingEmbedding(dimensions=16))
                .use_in_memory_vector_store()
                .use_reranker(selection, approved=True)
            ),
        ),
    )
    return builder


def test_without_the_plugin_the_error_says_what_to_install() -> None:
    with pytest.raises(ProviderNotFoundError, match="pip install runiq-rerank-http"):
        _builder(HttpReranking("cohere"), plugins=[])


async def test_a_missing_key_fails_only_the_reranking_step(monkeypatch) -> None:
    """No CO_API_KEY: the host builds and ingests (the index's resources open); reranking falls back."""
    monkeypatch.delenv("CO_API_KEY", raising=False)
    builder = _builder(HttpReranking("cohere"), plugins=[runiq_rerank_http.plugin])
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(host.services.get(IndexRuntime))
        )
        query = RagQuery(index_name="docs", text="remote work", mode=RagRetrievalMode.LEXICAL)
        result = await assembler.assemble(query, RagContextOptions(reranking=RerankingOptions(enabled=True)))
    assert result.reranking.outcome is RagRerankingOutcome.FALLBACK
    assert result.reranking.failure_code is RerankingFailureCode.FAILED
    assert result.reranking.cause_type == "RagConfigurationError"
    assert [item.document_id for item in result.context] == [hit.document_id for hit in result.retrieval.hits]

"""End to end: a host with the plugin, ingestion through the OpenAI client, semantic and hybrid retrieval."""

from __future__ import annotations

from runiq.hosting import HostBuilder
from runiq.rag import RagIngestionManager, RagIngestionState, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag

import runiq_openai.plugin
from runiq_openai import OpenAiEmbedding, OpenAiEmbeddingModels


async def test_ingest_and_retrieve_through_the_plugin(server, api_key_env, tmp_path) -> None:
    """Documents are embedded by the server; a query finds the document it shares words with."""
    (tmp_path / "remote.md").write_text("# Remote work\n\nEmployees may work remotely three days a week.\n")
    (tmp_path / "expenses.md").write_text("# Expenses\n\nSubmit travel receipts within thirty days.\n")
    selection = OpenAiEmbedding(
        OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL, dimensions=256, base_url=server.url, api_key_env=api_key_env
    )
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_openai.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: index.use_directory(tmp_path, "*.md").use_embedding(selection).use_in_memory_vector_store(),
        ),
    )
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        assert operation.progress.produced_embeddings >= 2
        retriever = host.services.get(RagRetriever)
        semantic = await retriever.retrieve(RagQuery(index_name="docs", text="work remotely"))
        hybrid = await retriever.retrieve(
            RagQuery(index_name="docs", text="travel receipts", mode=RagRetrievalMode.HYBRID)
        )
    assert semantic.hits[0].document_id.endswith("remote.md")
    assert semantic.hits[0].metric == "cosine-similarity"
    assert hybrid.hits[0].document_id.endswith("expenses.md")
    assert hybrid.hits[0].provenance.semantic is not None
    assert hybrid.hits[0].provenance.lexical is not None
    assert {r.dimensions for r in server.requests} == {256}
    assert server.requests[-1].inputs == ["travel receipts"]

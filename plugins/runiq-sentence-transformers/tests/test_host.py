"""End to end: a host with the plugin ingests documents with MiniLM and retrieves by meaning."""

from __future__ import annotations

from runiq.hosting import HostBuilder
from runiq.rag import (
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)

import runiq_sentence_transformers.plugin
from runiq_sentence_transformers import SentenceTransformerEmbedding

DOCUMENTS = {
    "remote.md": "# Working from home\n\nEmployees may work remotely up to three days each week.\n",
    "expenses.md": "# Expenses\n\nSubmit travel receipts to finance within thirty days of the trip.\n",
    "security.md": "# Passwords\n\nRotate your password every ninety days and never share it.\n",
    "cafeteria.md": "# Cafeteria\n\nLunch is served between noon and two in the afternoon.\n",
}


async def test_a_paraphrased_query_finds_its_document(no_network, tmp_path) -> None:
    """'How often can staff telecommute?' shares no content word with the remote-work document yet finds it."""
    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text)
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_sentence_transformers.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(tmp_path, "*.md")
                .use_embedding(SentenceTransformerEmbedding())
                .use_in_memory_vector_store()
            ),
        ),
    )
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        retriever = host.services.get(RagRetriever)
        remote = await retriever.retrieve(RagQuery(index_name="docs", text="How often can staff telecommute?"))
        money = await retriever.retrieve(RagQuery(index_name="docs", text="getting reimbursed for a business trip"))
        food = await retriever.retrieve(
            RagQuery(index_name="docs", text="when can I eat lunch", mode=RagRetrievalMode.HYBRID)
        )
    assert remote.hits[0].document_id.endswith("remote.md")
    assert money.hits[0].document_id.endswith("expenses.md")
    assert food.hits[0].document_id.endswith("cafeteria.md")
    assert remote.hits[0].relevance is not None
    assert remote.hits[0].relevance > remote.hits[-1].relevance

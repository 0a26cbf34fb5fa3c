"""Code-first version of runiq.toml: register, ingest on startup, query in all three modes.

Run: python examples/corporate-documents/app.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag

DOCUMENTS = Path(__file__).parent / "documents"
QUERIES = [
    ("POL-HR-014", RagRetrievalMode.LEXICAL),
    ('"manager approval"', RagRetrievalMode.LEXICAL),
    ("CS1503", RagRetrievalMode.HYBRID),
    ("IRagRetriever", RagRetrievalMode.HYBRID),
    ("remote work days per week", RagRetrievalMode.SEMANTIC),
]


def build() -> HostBuilder:
    builder = HostBuilder()
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "corporate-documents",
            lambda index: (
                index.use_directory(DOCUMENTS, "*.md", recursive=True)
                .use_embedding(HashingEmbedding(dimensions=384))
                .use_in_memory_vector_store()
                .configure_chunking(max_characters=800, overlap=80)
                .configure_ingestion(lambda ingestion: ingestion.on_startup())
            ),
        ),
    )
    return builder


async def main() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    async with build().build() as host:  # OnStartup: start() returns once the index is ingested
        retriever = host.services.get(RagRetriever)
        for text, mode in QUERIES:
            result = await retriever.retrieve(RagQuery(index_name="corporate-documents", text=text, mode=mode, top_k=3))
            found[text] = [hit.document_id for hit in result.hits]
            print(f"{mode.value:>8}  {text!r:32} -> {found[text]}")
    return found


if __name__ == "__main__":
    asyncio.run(main())

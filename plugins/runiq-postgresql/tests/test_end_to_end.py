"""Through the public API: registration, ingestion and retrieval (lexical, hybrid) on PostgreSQL."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

import runiq_postgresql.plugin
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._limits import MAX_CANDIDATES
from runiq_postgresql import PostgresVectorStorage, use_postgresql_vector_store

IDENTIFIER_QUERIES = {
    "POL-HR-014": "policy.md",
    "IRagRetriever": "build.md",
    "filename.cs": "build.md",
    "CS1503": "build.md",
}


def _documents(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "policy.md").write_text("# Policy POL-HR-014\n\nRemote work is allowed three days a week.\n")
    (root / "build.md").write_text(
        "# Build\n\nError CS1503 happens in filename.cs when IRagRetriever is misused.\n"
        "Hybrid retrieval preserves exact phrase order.\n"
    )
    (root / "travel.md").write_text("# Travel\n\nExpenses need receipts within thirty days.\n")
    return root


def _host(selection: PostgresVectorStorage, documents: Path) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(documents, "*.md").use_embedding(HashingEmbedding()).use_vector_store(selection)
            ),
        ),
    )
    return builder


async def test_ingest_then_find_identifiers_lexically_and_hybrid(
    postgres_dsn: str, schema: str, tmp_path: Path
) -> None:
    """Identifiers are found in LEXICAL and HYBRID mode; hybrid hits carry both provenances."""
    documents = _documents(tmp_path / "docs")
    async with _host(PostgresVectorStorage(dsn=postgres_dsn, schema=schema), documents).build() as host:
        manager = host.services.get(RagIngestionManager)
        operation = await manager.run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        assert operation.progress.added_documents == 3
        retriever = host.services.get(RagRetriever)
        for text, expected in IDENTIFIER_QUERIES.items():
            for mode in (RagRetrievalMode.LEXICAL, RagRetrievalMode.HYBRID):
                result = await retriever.retrieve(RagQuery(index_name="docs", text=text, mode=mode))
                assert result.hits, (text, mode)
                assert result.hits[0].document_id.endswith(expected), (text, mode)
                assert result.hits[0].provenance.lexical is not None
                if mode is RagRetrievalMode.HYBRID:
                    assert result.hits[0].provenance.fused_rank == 1
        semantic = await retriever.retrieve(
            RagQuery(index_name="docs", text="remote work", mode=RagRetrievalMode.SEMANTIC)
        )
        assert semantic.hits
        assert semantic.hits[0].metric == "cosine-similarity"
        phrase = await retriever.retrieve(
            RagQuery(index_name="docs", text='"exact phrase order"', mode=RagRetrievalMode.LEXICAL)
        )
        assert [h.document_id for h in phrase.hits] == [h.document_id for h in phrase.hits if "build" in h.document_id]
        assert phrase.hits
        reversed_phrase = await retriever.retrieve(
            RagQuery(index_name="docs", text='"order phrase exact"', mode=RagRetrievalMode.LEXICAL)
        )
        assert reversed_phrase.hits == ()


async def test_largest_top_k_and_filter_equality_through_the_retriever(postgres_dsn: str, schema: str) -> None:
    """Every mode serves top_k = MAX_CANDIDATES (the hybrid depth is capped, not refused by the store),
    and filters compare like the in-memory store's: 2024.0 finds 2024, True does not find 1."""
    documents = [
        RagDocument(document_id="int", content="remote work policy", metadata={"year": 2024, "flag": 1}),
        RagDocument(document_id="bool", content="remote work rules", metadata={"year": "2024", "flag": True}),
    ]
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    selection = PostgresVectorStorage(dsn=postgres_dsn, schema=schema)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: index.use_documents(documents).use_embedding(HashingEmbedding()).use_vector_store(selection),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        retriever = host.services.get(RagRetriever)

        async def found(mode: RagRetrievalMode, **kwargs: Any) -> list[str]:
            result = await retriever.retrieve(RagQuery(index_name="docs", text="remote", mode=mode, **kwargs))
            return sorted(hit.document_id for hit in result.hits)

        for mode in RagRetrievalMode:
            assert await found(mode, top_k=MAX_CANDIDATES) == ["bool", "int"], mode
            assert await found(mode, filters={"year": 2024.0}) == ["int"], mode
            assert await found(mode, filters={"flag": True}) == ["bool"], mode
            assert await found(mode, filters={"year": "2024"}) == ["bool"], mode


async def test_reingestion_is_incremental_and_durable(postgres_dsn: str, schema: str, tmp_path: Path) -> None:
    """A second host on the same schema skips unchanged documents, updates changed ones, deletes gone ones."""
    documents = _documents(tmp_path / "docs")
    selection = PostgresVectorStorage(dsn=postgres_dsn, schema=schema)
    async with _host(selection, documents).build() as host:
        assert (await host.services.get(RagIngestionManager).run("docs")).progress.added_documents == 3
    (documents / "travel.md").write_text("# Travel\n\nExpenses now need receipts within ten days.\n")
    (documents / "policy.md").unlink()
    async with _host(selection, documents).build() as host:
        progress = (await host.services.get(RagIngestionManager).run("docs")).progress
        assert (progress.skipped_documents, progress.updated_documents, progress.deleted_documents) == (1, 1, 1)
        retriever = host.services.get(RagRetriever)
        gone = await retriever.retrieve(RagQuery(index_name="docs", text="POL-HR-014", mode=RagRetrievalMode.LEXICAL))
        assert gone.hits == ()
        updated = await retriever.retrieve(RagQuery(index_name="docs", text="ten days", mode=RagRetrievalMode.LEXICAL))
        assert updated.hits[0].document_id.endswith("travel.md")


async def test_a_new_host_takes_unchanged_files_by_their_stored_stamps(
    postgres_dsn: str, schema: str, tmp_path: Path
) -> None:
    """Stamps persist in the documents table: a second host reads only the touched file."""
    documents = _documents(tmp_path / "docs")
    old = time.time_ns() - 100 * 1_000_000_000
    for path in documents.iterdir():
        os.utime(path, ns=(old, old))
    selection = PostgresVectorStorage(dsn=postgres_dsn, schema=schema)
    async with _host(selection, documents).build() as host:
        assert (await host.services.get(RagIngestionManager).run("docs")).progress.added_documents == 3
    (documents / "travel.md").write_text("# Travel\n\nExpenses now need receipts within ten days.\n")
    os.utime(documents / "travel.md", ns=(old + 10**9, old + 10**9))
    async with _host(selection, documents).build() as host:
        progress = (await host.services.get(RagIngestionManager).run("docs")).progress
        assert (progress.skipped_documents, progress.updated_documents, progress.produced_chunks) == (2, 1, 1)
    async with _host(selection, documents).build() as host:
        progress = (await host.services.get(RagIngestionManager).run("docs")).progress
        assert (progress.skipped_documents, progress.updated_documents, progress.embedding_calls) == (3, 0, 0)


async def test_string_reference_and_convenience_register_the_same_store(postgres_dsn: str, schema: str) -> None:
    """``use_vector_store("postgresql", ...)`` and ``use_postgresql_vector_store`` validate the same options."""
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    rag = add_runiq_rag(builder)
    rag.add_index(
        "a",
        lambda i: (
            i.use_documents([])
            .use_embedding(HashingEmbedding())
            .use_vector_store("postgresql", dsn=postgres_dsn, schema=schema)
        ),
    )
    rag.add_index(
        "b",
        lambda i: use_postgresql_vector_store(
            i.use_documents([]).use_embedding(HashingEmbedding()), dsn=postgres_dsn, schema=schema
        ),
    )
    a, b = rag.definitions
    assert a.vector_store.instance_key == b.vector_store.instance_key  # one live store, one pool
    with pytest.raises(RagConfigurationError) as caught:
        rag.add_index(
            "c",
            lambda i: (
                i.use_documents([])
                .use_embedding(HashingEmbedding())
                .use_vector_store("postgresql", dsn=postgres_dsn, schema="bad;schema", pool_size=3)
            ),
        )
    assert "schema" in str(caught.value)
    assert postgres_dsn not in str(caught.value)


async def test_registration_does_no_io() -> None:
    """An unreachable DSN is accepted at registration; nothing connects until the index is used."""
    selection = PostgresVectorStorage(dsn="postgresql://user:pw@127.0.0.1:1/db")
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs", lambda i: i.use_documents([]).use_embedding(HashingEmbedding()).use_vector_store(selection)
        ),
    )
    async with builder.build():
        pass
    assert "pw" not in repr(selection)
    assert "pw" not in selection.display_name


async def test_embedded_default_persists_across_hosts(embedded_data_dir: Path, tmp_path: Path) -> None:
    """``dsn=None`` starts an embedded server under ``data_dir``; a later host finds the data again."""
    documents = _documents(tmp_path / "docs")
    selection = PostgresVectorStorage(data_dir=embedded_data_dir)
    async with _host(selection, documents).build() as host:
        assert (await host.services.get(RagIngestionManager).run("docs")).state is RagIngestionState.COMPLETED
    async with _host(selection, documents).build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.progress.skipped_documents == 3
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text="CS1503", mode=RagRetrievalMode.HYBRID)
        )
        assert result.hits[0].document_id.endswith("build.md")


async def test_filter_operators_work_and_unknown_ones_are_validation_errors(pg_store: Any) -> None:
    """Equality (also combined with $and) and operators work; an unknown operator is a clear validation error."""
    import numpy as np

    from runiq.rag import RagValidationError
    from runiq.rag.providers import IndexSpec, StoredDocument
    from runiq.rag.testing import make_chunks

    await pg_store.ensure_index(IndexSpec(name="f", dimensions=3, embedding_model="m"))
    chunks = make_chunks("d1", ["alpha"])
    chunks = [type(c)(**{**{s: getattr(c, s) for s in c.__slots__}, "metadata": {"n": 3, "t": "a"}}) for c in chunks]
    await pg_store.replace_document("f", StoredDocument(document_id="d1", content_hash="h"), chunks, np.eye(1, 3))
    vector = np.array([1, 0, 0], dtype=np.float32)
    assert len(await pg_store.search("f", vector, top_k=3, filters={"n": 3.0})) == 1
    assert len(await pg_store.search("f", vector, top_k=3, filters={"$and": [{"n": 3}, {"t": "a"}]})) == 1
    assert len(await pg_store.search("f", vector, top_k=3, filters={"n": {"$gt": 2}, "t": {"$in": ["a"]}})) == 1
    assert await pg_store.search("f", vector, top_k=3, filters={"$or": [{"n": {"$lt": 3}}, {"t": "b"}]}) == []
    with pytest.raises(RagValidationError, match=r"^Filter"):
        await pg_store.search("f", vector, top_k=3, filters={"n": {"$regex": "3"}})


async def test_pages_and_offsets_survive_the_round_trip(postgres_dsn: str, schema: str) -> None:
    """A paged document's chunks keep page and start/end offsets through PostgreSQL: every hit of every
    mode carries them, they slice the extracted text to the hit's content, and 'page' filters."""
    from runiq.rag._loaders import LoadedDocument

    loaded = LoadedDocument.from_pages(
        ["Introduction to the handbook and its purpose.", "Approval: expenses above 500 EUR need a manager."]
    )
    document = loaded.to_document("handbook.pdf")
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    selection = PostgresVectorStorage(dsn=postgres_dsn, schema=schema)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "paged",
            lambda index: (
                index.use_documents([document])
                .use_embedding(HashingEmbedding())
                .use_vector_store(selection)
                .configure_chunking(max_characters=50, overlap=0)
            ),
        ),
    )
    async with builder.build() as host:
        assert (await host.services.get(RagIngestionManager).run("paged")).state is RagIngestionState.COMPLETED
        retriever = host.services.get(RagRetriever)
        for mode in RagRetrievalMode:
            result = await retriever.retrieve(RagQuery(index_name="paged", text="manager approval", mode=mode))
            hit = next(h for h in result.hits if "manager" in h.content)
            assert hit.page == 2, mode
            assert hit.start_offset is not None
            assert document.content[hit.start_offset : hit.end_offset] == hit.content
            assert loaded.pages[1].start <= hit.start_offset < loaded.pages[1].end
        first = await retriever.retrieve(
            RagQuery(index_name="paged", text="handbook", mode=RagRetrievalMode.LEXICAL, filters={"page": 1})
        )
        assert [h.page for h in first.hits] == [1]

"""The incremental pipeline: skip unchanged, replace changed chunk sets, delete vanished documents,
re-ingest on configuration change, and leave every document at its old or new version on cancel."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runiq.hosting import Host
from runiq.rag import RagDocument, RagIngestionManager, RagIngestionState, RagQuery, RagRetrievalMode, RagRetriever
from runiq.rag._chunking import ChunkingOptions, TextChunker
from runiq.rag.providers import HashingEmbedder, InMemoryVectorStore
from runiq.rag.testing import FailingEmbedder

S = RagIngestionState
DIMS = 32

LONG_V1 = "First sentence of alpha. Second sentence of alpha. Third sentence of alpha."
LONG_V2 = "Only one short alpha."


def _configure(
    source: Any,
    *,
    embedder: str = "counting",
    store: str | None = None,
    chunk: tuple[int, int] = (30, 0),
    batching: tuple[int, int] | None = None,
) -> Callable[[Any], object]:
    def configure(index: Any) -> object:
        index.add_source(source).use_embedding(embedder).configure_chunking(*chunk)
        if store is None:
            index.use_in_memory_vector_store()
        else:
            index.use_vector_store(store)
        if batching is not None:
            index.configure_embedding_batching(*batching)
        return index

    return configure


async def _run(host: Host) -> Any:
    return await host.services.get(RagIngestionManager).run("docs")


def _expected(document_id: str, content: str, chunk: tuple[int, int] = (30, 0)) -> dict[str, str]:
    chunks = TextChunker(ChunkingOptions(max_characters=chunk[0], overlap=chunk[1])).chunk(
        RagDocument(document_id=document_id, content=content)
    )
    return {c.chunk_id: c.content for c in chunks}


async def test_second_run_skips_unchanged_documents_without_embedding(
    index_host: Callable[..., Host], source: Any, counting_embedder: Any
) -> None:
    """Re-ingesting unchanged content makes zero embedding calls and counts every document as skipped."""
    source.set(a=LONG_V1, b="Bravo text.", c="Charlie text.")
    async with index_host(_configure(source), embeddings={"counting": counting_embedder}) as host:
        first = await _run(host)
        calls = len(counting_embedder.batches)
        assert first.progress.added_documents == 3 and calls > 0
        second = await _run(host)
        assert len(counting_embedder.batches) == calls
        p = second.progress
        assert (p.skipped_documents, p.added_documents, p.updated_documents, p.failed_documents) == (3, 0, 0, 0)
        assert (p.produced_chunks, p.produced_embeddings, p.embedding_calls) == (0, 0, 0)
        assert second.state is S.COMPLETED


async def test_changed_document_chunk_set_is_replaced(
    index_host: Callable[..., Host],
    source: Any,
    counting_embedder: Any,
    memory_store: InMemoryVectorStore,
    stored_chunks: Callable[..., Any],
) -> None:
    """A changed document gets exactly its new chunks (stale ids gone); only its chunks are re-embedded."""
    source.set(a=LONG_V1, b="Bravo text.")
    host = index_host(
        _configure(source, store="shared"), embeddings={"counting": counting_embedder}, stores={"shared": memory_store}
    )
    async with host:
        await _run(host)
        before = await stored_chunks(memory_store, "docs", DIMS)
        assert before["a"] == _expected("a", LONG_V1) and len(before["a"]) >= 3
        counting_embedder.batches.clear()
        source.set(a=LONG_V2, b="Bravo text.")
        operation = await _run(host)
        after = await stored_chunks(memory_store, "docs", DIMS)
        assert after["a"] == _expected("a", LONG_V2) == {"a#0": LONG_V2}
        assert after["b"] == before["b"]
        assert counting_embedder.texts == [LONG_V2]
        assert (operation.progress.updated_documents, operation.progress.skipped_documents) == (1, 1)


async def test_document_emptied_loses_its_old_chunks(
    index_host: Callable[..., Host],
    source: Any,
    counting_embedder: Any,
    memory_store: InMemoryVectorStore,
    stored_chunks: Callable[..., Any],
) -> None:
    """A document whose new content is blank keeps no stale chunks."""
    source.set(a=LONG_V1, b="Bravo text.")
    host = index_host(
        _configure(source, store="shared"), embeddings={"counting": counting_embedder}, stores={"shared": memory_store}
    )
    async with host:
        await _run(host)
        source.set(a="   \n", b="Bravo text.")
        operation = await _run(host)
        assert operation.state is S.COMPLETED
        assert "a" not in await stored_chunks(memory_store, "docs", DIMS)
        assert await memory_store.count("docs") == 1


async def test_deleted_files_are_removed(index_host: Callable[..., Host], tmp_path: Path) -> None:
    """A file gone from the directory is deleted from the index and no longer retrievable."""
    (tmp_path / "a.md").write_text("Policy POL-HR-014 covers remote work.")
    (tmp_path / "b.md").write_text("Error CS1503 in filename.cs.")
    host = index_host(
        lambda index: (
            index.use_directory(tmp_path, "*.md").use_embedding("hashing", dimensions=DIMS).use_in_memory_vector_store()
        )
    )
    async with host:
        retriever = host.services.get(RagRetriever)
        query = RagQuery(index_name="docs", text="CS1503", mode=RagRetrievalMode.LEXICAL)
        await _run(host)
        assert [h.document_id for h in (await retriever.retrieve(query)).hits] == ["b.md"]
        (tmp_path / "b.md").unlink()
        operation = await _run(host)
        assert operation.progress.deleted_documents == 1
        assert operation.progress.skipped_documents == 1
        assert (await retriever.retrieve(query)).hits == ()
        semantic = await retriever.retrieve(RagQuery(index_name="docs", text="filename.cs CS1503", top_k=10))
        assert [h.document_id for h in semantic.hits] == ["a.md"]


async def test_unreadable_document_keeps_its_previous_version(
    index_host: Callable[..., Host],
    tmp_path: Path,
    memory_store: InMemoryVectorStore,
    stored_chunks: Callable[..., Any],
) -> None:
    """A file that fails to read is reported (PARTIALLY_COMPLETED) but its stored version is not deleted."""
    (tmp_path / "a.md").write_text("Alpha text.")
    (tmp_path / "b.md").write_text("Bravo text.")
    host = index_host(
        lambda index: (
            index.use_directory(tmp_path, "*.md").use_embedding("hashing", dimensions=DIMS).use_vector_store("shared")
        ),
        stores={"shared": memory_store},
    )
    async with host:
        await _run(host)
        (tmp_path / "b.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
        operation = await _run(host)
        assert operation.state is S.PARTIALLY_COMPLETED
        assert operation.last_failure is not None
        assert (operation.last_failure.code, operation.last_failure.document_id) == ("undecodable", "b.md")
        assert operation.progress.deleted_documents == 0
        assert (await stored_chunks(memory_store, "docs", DIMS))["b.md"] == {"b.md#0": "Bravo text."}


async def test_chunking_change_reingests_and_same_configuration_skips(
    make_host: Callable[..., Host], source: Any, memory_store: InMemoryVectorStore
) -> None:
    """On the same store, a new chunking configuration updates every document; the same one skips them."""
    source.set(a=LONG_V1, b="Bravo text that is long enough to split somewhere.")

    def host_with(chunk: tuple[int, int]) -> Host:
        return make_host(
            lambda rag: rag.add_index("docs", _configure(source, embedder="hashing-32", store="shared", chunk=chunk)),
            embeddings={"hashing-32": HashingEmbedder(DIMS)},
            stores={"shared": memory_store},
        )

    async with host_with((30, 0)) as first:
        assert (await _run(first)).progress.added_documents == 2
    async with host_with((30, 0)) as same:
        assert (await _run(same)).progress.skipped_documents == 2
    async with host_with((20, 5)) as changed:
        operation = await _run(changed)
        assert (operation.progress.updated_documents, operation.progress.skipped_documents) == (2, 0)


async def test_embedding_model_change_is_refused_and_keeps_the_index(
    make_host: Callable[..., Host], source: Any, memory_store: InMemoryVectorStore
) -> None:
    """Another embedding dimension on the same stored index fails the run instead of mixing vectors."""
    source.set(a="Alpha text.")

    def host_with(dimensions: int) -> Host:
        return make_host(
            lambda rag: rag.add_index(
                "docs",
                lambda index: (
                    index.add_source(source).use_embedding("hashing", dimensions=dimensions).use_vector_store("shared")
                ),
            ),
            stores={"shared": memory_store},
        )

    async with host_with(16) as first:
        await _run(first)
    async with host_with(24) as second:
        operation = await _run(second)
        assert operation.state is S.FAILED
        assert operation.last_failure is not None and operation.last_failure.code == "ingestion_failed"
    assert await memory_store.count("docs") == 1


async def test_duplicate_document_ids_keep_the_first(index_host: Callable[..., Host], source: Any) -> None:
    """Two documents with one id: the second fails with 'duplicate_document_id', the first is stored."""
    source.documents = [RagDocument(document_id="a", content="first"), RagDocument(document_id="a", content="second")]
    async with index_host(
        _configure(source, embedder="hashing-like"), embeddings={"hashing-like": HashingEmbedder(DIMS)}
    ) as host:
        operation = await _run(host)
        assert operation.state is S.PARTIALLY_COMPLETED
        assert operation.last_failure is not None and operation.last_failure.code == "duplicate_document_id"
        hits = (
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="first second", mode=RagRetrievalMode.LEXICAL)
            )
        ).hits
        assert [h.content for h in hits] == ["first"]


async def test_documents_gone_from_every_source_are_deleted(
    index_host: Callable[..., Host], source_type: Any, counting_embedder: Any
) -> None:
    """With two sources, a document moving from one to the other is kept; one gone from both is deleted."""
    first, second = source_type(identity="first"), source_type(identity="second")
    first.set(a="Alpha text.", b="Bravo text.")
    second.set(c="Charlie text.")
    host = index_host(
        lambda index: index.add_source(first).add_source(second).use_embedding("counting").use_in_memory_vector_store(),
        embeddings={"counting": counting_embedder},
    )
    async with host:
        assert (await _run(host)).progress.added_documents == 3
        first.set(a="Alpha text.")
        second.set(b="Bravo text.")
        operation = await _run(host)
        assert operation.progress.deleted_documents == 1
        hits = (
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="text", mode=RagRetrievalMode.LEXICAL, top_k=10)
            )
        ).hits
        assert sorted(h.document_id for h in hits) == ["a", "b"]


async def test_small_documents_share_embedding_batches(
    index_host: Callable[..., Host], source: Any, counting_embedder: Any
) -> None:
    """Ten one-chunk documents with batch size 4 are embedded in three provider calls, not ten."""
    source.set(**{f"d{i}": f"Document number {i}." for i in range(10)})
    host = index_host(_configure(source, batching=(4, 1)), embeddings={"counting": counting_embedder})
    async with host:
        operation = await _run(host)
        assert operation.progress.added_documents == 10
        assert sorted(len(b) for b in counting_embedder.batches) == [2, 4, 4]
        assert operation.progress.embedding_calls == 3


async def test_cancellation_leaves_every_document_at_its_old_or_new_version(
    index_host: Callable[..., Host],
    source: Any,
    gated_embedder_type: Any,
    memory_store: InMemoryVectorStore,
    stored_chunks: Callable[..., Any],
) -> None:
    """Cancelled mid-run (mid-document, between chunk batches): each document has exactly its old or its
    new chunk set, some already new and the interrupted one still old; a rerun converges."""
    old = {f"d{i}": f"Old sentence one of d{i}. Old sentence two of d{i}. Old three." for i in range(6)}
    new = {f"d{i}": f"New sentence one of d{i}. New sentence two GATE{i} here. New three." for i in range(6)}
    embedder = gated_embedder_type(DIMS, gate_on="GATE3")
    embedder.release.set()  # the first run passes freely
    source.set(**old)
    host = index_host(
        _configure(source, embedder="gated", store="shared", batching=(1, 1)),
        embeddings={"gated": embedder},
        stores={"shared": memory_store},
    )
    async with host:
        manager = host.services.get(RagIngestionManager)
        await manager.run("docs")
        embedder.release.clear()
        embedder.reached.clear()
        source.set(**new)
        await manager.start("docs")
        await asyncio.wait_for(embedder.reached.wait(), 2)
        cancelled = await asyncio.wait_for(manager.cancel("docs"), 2)
        assert cancelled.state is S.CANCELLED
        stored = await stored_chunks(memory_store, "docs", DIMS)
        versions = {}
        for doc_id in old:
            if stored[doc_id] == _expected(doc_id, old[doc_id]):
                versions[doc_id] = "old"
            else:
                assert stored[doc_id] == _expected(doc_id, new[doc_id]), doc_id
                versions[doc_id] = "new"
        assert versions["d3"] == "old"  # interrupted after its first chunk was embedded
        assert "new" in versions.values()
        assert len(_expected("d3", new["d3"])) >= 2
        embedder.release.set()
        rerun = await manager.run("docs")
        assert rerun.state is S.COMPLETED
        assert await stored_chunks(memory_store, "docs", DIMS) == {d: _expected(d, t) for d, t in new.items()}


@pytest.mark.parametrize("content_type", ["text/markdown", "text/plain"])
async def test_stored_chunks_carry_document_metadata(
    index_host: Callable[..., Host], source: Any, content_type: str
) -> None:
    """Stored chunks keep the document's metadata (and Markdown chunks their section)."""
    source.documents = [
        RagDocument(
            document_id="a", content="# Title\n\nBody text.", content_type=content_type, metadata={"team": "hr"}
        )
    ]
    async with index_host(
        lambda index: index.add_source(source).use_embedding("hashing", dimensions=DIMS).use_in_memory_vector_store()
    ) as host:
        await _run(host)
        hit = (
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="body", filters={"team": "hr"})
            )
        ).hits[0]
        assert hit.metadata["team"] == "hr"
        assert (hit.metadata.get("section") == "Title") is (content_type == "text/markdown")


async def test_a_failing_document_with_a_non_utf8_file_name_does_not_abort_the_run(
    index_host: Callable[..., Host], tmp_path: Path
) -> None:
    """One bad document (Latin-1 file name, embedding failure) fails alone; the other file is still stored."""
    (tmp_path / os.fsdecode(b"caf\xe9.md")).write_bytes(b"BROKEN text in a Latin-1 named file")
    (tmp_path / "good.md").write_text("Good text about CS1503.")
    host = index_host(
        lambda index: index.use_directory(tmp_path, "*.md").use_embedding("failing").use_in_memory_vector_store(),
        embeddings={"failing": FailingEmbedder(DIMS, fail_on="BROKEN")},
    )
    async with host:
        operation = await _run(host)
        assert operation.state is S.PARTIALLY_COMPLETED
        assert (operation.progress.failed_documents, operation.progress.added_documents) == (1, 1)
        hits = (
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="CS1503", mode=RagRetrievalMode.LEXICAL)
            )
        ).hits
        assert [h.document_id for h in hits] == ["good.md"]


async def test_every_failed_document_is_listed_with_its_code(index_host: Callable[..., Host], tmp_path: Path) -> None:
    """The run names each failed document (relative id and code), not only the last one."""
    (tmp_path / "good.md").write_text("Alpha text.")
    for name in ("bad-1.md", "bad-2.md", "bad-3.md"):
        (tmp_path / name).write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    host = index_host(
        lambda index: (
            index.use_directory(tmp_path, "*.md").use_embedding("hashing", dimensions=DIMS).use_in_memory_vector_store()
        )
    )
    async with host:
        operation = await _run(host)
        status = host.services.get(RagIngestionManager).status("docs")
    assert operation.state is S.PARTIALLY_COMPLETED
    listed = {(f.document_id, f.code) for f in operation.failures}
    assert listed == {("bad-1.md", "undecodable"), ("bad-2.md", "undecodable"), ("bad-3.md", "undecodable")}
    assert status.last_operation is not None and len(status.last_operation.failures) == 3


async def test_chunks_are_embedded_and_indexed_under_their_title_and_section(
    index_host: Callable[..., Host],
    source: Any,
    counting_embedder: Any,
    memory_store: InMemoryVectorStore,
    stored_chunks: Callable[..., Any],
) -> None:
    """A chunk cut from the middle of a section is embedded and found with its heading path in front;
    the stored and returned content is the chunk's own text (runiq.rag._chunking.context)."""
    body = " ".join(f"Sentence {i} about eligibility rules." for i in range(12))
    content = f"# Handbook\n\n## Remote work\n\n{body}"
    source.documents = [
        RagDocument(document_id="handbook.md", content=content, content_type="text/markdown", title="handbook")
    ]
    host = index_host(
        _configure(source, store="shared", chunk=(120, 0)),
        embeddings={"counting": counting_embedder},
        stores={"shared": memory_store},
    )
    async with host:
        await _run(host)
        chunks = (await stored_chunks(memory_store, "docs", DIMS))["handbook.md"]
        last = chunks[f"handbook.md#{len(chunks) - 1}"]
        assert last.startswith("Sentence") and "Remote work" not in last
        assert f"Handbook\nRemote work\n\n{last}" in counting_embedder.texts
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text="remote handbook", mode=RagRetrievalMode.LEXICAL, top_k=50)
        )
        assert len(result.hits) == len(chunks)  # every chunk holds the heading words through its context
        assert {hit.content for hit in result.hits} == set(chunks.values())

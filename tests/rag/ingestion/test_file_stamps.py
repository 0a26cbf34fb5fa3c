"""Change detection by file stamps: an unchanged file (same size, modification time, loader and
configuration) is not read again; a racy or future timestamp is not trusted; a changed configuration or
loader registry, a touched file, a deleted file, a failed file and the document API all behave."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runiq.hosting import Host
from runiq.rag import RagDocument, RagIngestionManager, RagIngestionState
from runiq.rag._loaders.builtin import builtin_registry
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag._sources import DirectorySource
from runiq.rag.providers import InMemoryVectorStore

S = RagIngestionState
OLD = 100  # seconds: a modification time this old is trusted
DIMS = 32


def _age(path: Path, seconds: float = OLD) -> None:
    when = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(when, when))


def _write_old(path: Path, content: str, seconds: float = OLD) -> None:
    path.write_text(content)
    _age(path, seconds)


def _rewrite_keeping_stamp(path: Path, content: str) -> None:
    """New content of the same size, the modification time put back: what a stamp cannot see."""
    before = path.stat()
    assert len(content.encode()) == before.st_size
    path.write_text(content)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _host(
    index_host: Callable[..., Host],
    store: InMemoryVectorStore,
    embedder: Any,
    source: Any,
    chunk: tuple[int, int] = (30, 0),
) -> Host:
    return index_host(
        lambda index: (
            index.add_source(source).use_embedding("counting").configure_chunking(*chunk).use_vector_store("shared")
        ),
        embeddings={"counting": embedder},
        stores={"shared": store},
    )


async def _run(host: Host) -> Any:
    return await host.services.get(RagIngestionManager).run("docs")


def _counts(operation: Any) -> tuple[int, int, int, int, int]:
    p = operation.progress
    return (p.added_documents, p.updated_documents, p.skipped_documents, p.deleted_documents, p.failed_documents)


async def test_unchanged_files_are_not_read_and_embed_nothing(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """A second run reads no file whose stamp is stored: 0 embedding calls, every document skipped."""
    for name in ("a", "b", "c"):
        _write_old(tmp_path / f"{name}.txt", f"Text of {name}.")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        assert _counts(await _run(host)) == (3, 0, 0, 0, 0)
        stamps = await memory_store.document_stamps("docs", ["a.txt", "b.txt", "c.txt"])
        assert set(stamps) == {"a.txt", "b.txt", "c.txt"}
        hashes = dict(await memory_store.document_hashes("docs"))
        calls = len(counting_embedder.batches)
        # Not read: new content behind an unchanged stamp stays unseen (the documented limit of stamps).
        _rewrite_keeping_stamp(tmp_path / "b.txt", "Text of B.")
        second = await _run(host)
        assert (second.state, _counts(second)) == (S.COMPLETED, (0, 0, 3, 0, 0))
        assert second.progress.processed_documents == second.progress.discovered_documents == 3
        assert len(counting_embedder.batches) == calls
        assert dict(await memory_store.document_hashes("docs")) == hashes
        # Touched: the stamp changed, so it is read, and its new content replaces the old.
        _age(tmp_path / "b.txt", OLD - 1)
        third = await _run(host)
        assert _counts(third) == (0, 1, 2, 0, 0)
        assert dict(await memory_store.document_hashes("docs"))["b.txt"] != hashes["b.txt"]


async def test_a_racy_timestamp_is_not_trusted(
    index_host: Callable[..., Host],
    tmp_path: Path,
    memory_store: InMemoryVectorStore,
    counting_embedder: Any,
    stored_chunks: Callable[..., Any],
) -> None:
    """A file modified within the racy window of its listing (or dated in the future) gets no stamp: a
    change in the same second, with the same size and modification time, is still read next run."""
    fresh, future, old = tmp_path / "fresh.txt", tmp_path / "future.txt", tmp_path / "old.txt"
    fresh.write_text("Fresh text.")
    future.write_text("Future text.")
    _age(future, -3600)
    _write_old(old, "Old text.")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        assert _counts(await _run(host)) == (3, 0, 0, 0, 0)
        assert set(await memory_store.document_stamps("docs", ["fresh.txt", "future.txt", "old.txt"])) == {"old.txt"}
        _rewrite_keeping_stamp(fresh, "FRESH TEXT.")
        _rewrite_keeping_stamp(future, "FUTURE TEXT.")
        second = await _run(host)
        assert _counts(second) == (0, 2, 1, 0, 0)  # both read again and found changed; old.txt not read
        chunks = await stored_chunks(memory_store, "docs", DIMS)
        assert (chunks["fresh.txt"], chunks["future.txt"]) == (
            {"fresh.txt#0": "FRESH TEXT."},
            {"future.txt#0": "FUTURE TEXT."},
        )


async def test_a_touched_file_with_the_same_content_embeds_nothing_and_keeps_its_new_stamp(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """A changed stamp over the same content is read and hashed, embeds nothing, and its new stamp is
    stored, so the run after reads it no more."""
    path = tmp_path / "a.txt"
    _write_old(path, "Alpha text.")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        await _run(host)
        before = dict(await memory_store.document_stamps("docs", ["a.txt"]))
        calls = len(counting_embedder.batches)
        _age(path, OLD + 50)
        assert _counts(await _run(host)) == (0, 0, 1, 0, 0)
        after = dict(await memory_store.document_stamps("docs", ["a.txt"]))
        assert set(after) == {"a.txt"} and after != before
        _rewrite_keeping_stamp(path, "ALPHA TEXT.")
        assert _counts(await _run(host)) == (0, 0, 1, 0, 0)  # not read: the new stamp matched
        assert len(counting_embedder.batches) == calls


async def test_a_configuration_change_reads_every_file_again(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """Stamps carry the index's configuration fingerprint: other chunking options read and re-chunk all."""
    _write_old(tmp_path / "a.txt", "First sentence of alpha. Second sentence of alpha.")
    _write_old(tmp_path / "b.txt", "Bravo text.")
    source = DirectorySource(root=tmp_path, pattern="*.txt")
    async with _host(index_host, memory_store, counting_embedder, source) as host:
        await _run(host)
        assert _counts(await _run(host)) == (0, 0, 2, 0, 0)
    async with _host(index_host, memory_store, counting_embedder, source, chunk=(60, 0)) as host:
        assert _counts(await _run(host)) == (0, 2, 0, 0, 0)
        assert _counts(await _run(host)) == (0, 0, 2, 0, 0)


async def test_a_changed_loader_registry_reads_the_files_again(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """A file now read by another loader is read again (here Markdown instead of plain text)."""
    _write_old(tmp_path / "a.md", "# Title\n\nBody of the note.")
    as_text = DirectorySource(root=tmp_path, pattern="*.md", loaders=LoaderRegistry())  # no loader: plain text
    async with _host(index_host, memory_store, counting_embedder, as_text) as host:
        await _run(host)
        assert _counts(await _run(host)) == (0, 0, 1, 0, 0)
    as_markdown = DirectorySource(root=tmp_path, pattern="*.md", loaders=builtin_registry())
    async with _host(index_host, memory_store, counting_embedder, as_markdown) as host:
        assert _counts(await _run(host)) == (0, 1, 0, 0, 0)
        assert _counts(await _run(host)) == (0, 0, 1, 0, 0)


async def test_deleted_files_are_deleted_while_unchanged_ones_stay(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """Unchanged files are seen without being read, so only the deleted file's document goes."""
    for name in ("a", "b", "c"):
        _write_old(tmp_path / f"{name}.txt", f"Text of {name}.")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        await _run(host)
        (tmp_path / "b.txt").unlink()
        assert _counts(await _run(host)) == (0, 0, 2, 1, 0)
        assert set(await memory_store.document_hashes("docs")) == {"a.txt", "c.txt"}


async def test_failed_files_are_read_again_and_keep_their_previous_version(
    index_host: Callable[..., Host],
    tmp_path: Path,
    memory_store: InMemoryVectorStore,
    counting_embedder: Any,
    stored_chunks: Callable[..., Any],
) -> None:
    """A file that fails stores no stamp: it is read (and fails) every run, never skipped; a stored
    document whose file now fails keeps its version and its old stamp, so it is read next run too."""
    _write_old(tmp_path / "good.txt", "Good text.")
    _write_old(tmp_path / "bad.txt", "Bad text now.")
    _write_old(tmp_path / "broken.txt", "x")
    (tmp_path / "broken.txt").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    _age(tmp_path / "broken.txt")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        first = await _run(host)
        assert (first.state, _counts(first)) == (S.PARTIALLY_COMPLETED, (2, 0, 0, 0, 1))
        (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
        _age(tmp_path / "bad.txt", OLD - 1)
        for _ in range(2):
            again = await _run(host)
            assert (again.state, _counts(again)) == (S.PARTIALLY_COMPLETED, (0, 0, 1, 0, 2))
            assert {f.document_id for f in again.failures} == {"bad.txt", "broken.txt"}
        assert (await stored_chunks(memory_store, "docs", DIMS))["bad.txt"] == {"bad.txt#0": "Bad text now."}


async def test_the_document_api_clears_the_stamp_so_the_file_is_read_again(
    index_host: Callable[..., Host], tmp_path: Path, memory_store: InMemoryVectorStore, counting_embedder: Any
) -> None:
    """A document given directly has no stamp: writing it clears the file's, and the next run reads the
    file (and puts its content back)."""
    _write_old(tmp_path / "a.txt", "File text.")
    async with _host(
        index_host, memory_store, counting_embedder, DirectorySource(root=tmp_path, pattern="*.txt")
    ) as host:
        manager = host.services.get(RagIngestionManager)
        await _run(host)
        await manager.ingest_documents("docs", [RagDocument(document_id="a.txt", content="Given text.")])
        assert dict(await memory_store.document_stamps("docs", ["a.txt"])) == {}
        assert _counts(await _run(host)) == (0, 1, 0, 0, 0)
        assert set(await memory_store.document_stamps("docs", ["a.txt"])) == {"a.txt"}


async def test_a_source_without_stamps_is_read_in_full(
    index_host: Callable[..., Host], memory_store: InMemoryVectorStore, counting_embedder: Any, source: Any
) -> None:
    """In-memory and plugin sources keep the content-hash path: every document read, none stamped."""
    source.set(a="Alpha text.", b="Bravo text.")
    async with _host(index_host, memory_store, counting_embedder, source) as host:
        await _run(host)
        assert _counts(await _run(host)) == (0, 0, 2, 0, 0)
        assert dict(await memory_store.document_stamps("docs", ["a", "b"])) == {}

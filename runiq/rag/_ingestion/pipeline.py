"""The incremental ingestion pipeline: source -> prepare -> embed -> write, as overlapping stages.

Sources stream their documents; a window of them has its stored hashes looked up at once, then is hashed
and chunked in a worker thread (:mod:`preparing`), sorted longest chunks first and cut into groups that
fill the embedder's concurrent batches. Each group is embedded (:mod:`embedding`) while earlier groups
are written (:mod:`writing`) and later ones prepared. A write takes every embedded group waiting for it,
up to :data:`WRITE_CHUNKS` chunks, in one transaction where the store offers bulk writes; two writes run
at once, so one's CPU work (a store tokenising, encoding rows) overlaps the other's time in the
database. The queues between the stages are bounded, so memory is bounded by a few thousand chunks and
the slowest stage sets the pace: a local model's speed, or the store's with a fast embedder.

Incremental by content hash: the hash covers the document content and the configuration that turns it
into chunks and vectors (chunking options, embedding model, dimension, metric), so an unchanged document
is neither re-chunked nor re-embedded, and a configuration change re-ingests everything. Each document
is replaced atomically, so a crash or cancellation leaves every document at its old version or its new
one. A document that failed keeps its previous version. After every source has been read to the end,
stored documents that no source delivered (nor reported as failed) are deleted; a source that fails, or
a cancelled run, deletes nothing. Seen ids are kept as 8-byte hashes in a sorted array and the stored
ids are paged through, so a run never holds every id's text.

A first ingestion (the index holds no documents when the run starts) runs inside the store's bulk-load
mode where it offers one (:class:`~runiq.rag._stores.base.BulkLoading`): PostgreSQL then builds its
secondary and vector indexes once at the end instead of maintaining them row by row.

Unchanged without reading, by stamps: when the source can list its documents with stamps and the store
keeps them (:mod:`unchanged`), a document whose stamp matches the stored one is not read at all; it is
counted as skipped and seen (so it is not deleted).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from runiq.errors import first_leaf
from runiq.rag._documents import RagDocument
from runiq.rag._ingestion.embedding import GroupEmbedder, Vectors
from runiq.rag._ingestion.operation import RagIngestionPhase
from runiq.rag._ingestion.preparing import Pending, Unusable, prepare_off_loop, prepare_some
from runiq.rag._ingestion.progress import ProgressTracker
from runiq.rag._ingestion.unchanged import StampChooser
from runiq.rag._ingestion.writing import GroupWriter
from runiq.rag._observability.otel import stage_span
from runiq.rag._runtime import IndexResources
from runiq.rag._sources.base import (
    DocumentSource,
    SourceFailure,
    SourceSkip,
    SourceUnchanged,
    StampedItem,
    StampedSource,
)
from runiq.rag._stores.base import BulkLoading, DocumentStamps

if TYPE_CHECKING:
    from runiq.rag._ingestion.seen import SeenIds

__all__ = ["IngestionPipeline", "ProgressTracker"]

_WINDOW_DOCUMENTS = 1024  # documents whose stored hashes are looked up in one call
_WINDOW_CHARACTERS = 1 << 24  # or fewer, when their content adds up to this many characters
_ID_PAGE = 1000  # stored ids read (and stale ones deleted) per call
# A write takes every embedded group waiting for it, up to about this many chunks: one transaction per
# two thousand chunks when the store is the slowest stage, one per group when the embedder is. With the
# two writers, the groups queued for them and the group being embedded, a run holds about 8,000 chunks.
WRITE_CHUNKS = 2048
_WRITERS = 2  # writes in flight at once

_Group = list[Pending]
_Embedded = tuple[_Group, list[Vectors]]
_Incoming = tuple[RagDocument, str | None]  # a document and the stamp to store with it
# A listed document's id, what the source made of it (None: unchanged, not read), its source kind, its stamp.
_Listed = tuple[str, RagDocument | SourceFailure | None, str, str | None]


class IngestionPipeline:
    """Runs one ingestion of one index (:meth:`run`), or a document API call (:meth:`ingest`)."""

    def __init__(self, resources: IndexResources, tracker: ProgressTracker) -> None:
        self._resources = resources
        self._tracker = tracker
        self._name = resources.definition.name
        definition = resources.definition
        # One group fills every concurrent embedding batch once.
        self._group_chunks = definition.embedding_batch_size * definition.embedding_concurrency
        self._embedder = GroupEmbedder(resources.embedder, tracker, self._name)
        self._writer = GroupWriter(resources, tracker)

    async def run(self, accept: Callable[[str], bool] | None = None) -> None:
        """Every source to the end, then the stale documents deleted.

        With ``accept`` (a shared run's bucket, see :mod:`shared`) only the items whose document id it
        admits are ingested or counted, and nothing is deleted: the shared run's finisher does that.
        """
        await self._resources.store.ensure_index(self._resources.spec)
        from runiq.rag._ingestion.seen import SeenIds  # numpy: loaded once a run starts, not when a host is built

        seen = SeenIds()
        self._tracker.phase = RagIngestionPhase.INGESTING
        async with await self._first_load():
            await self._flow(self._from_sources(seen, accept))
        if accept is None:
            self._tracker.phase = RagIngestionPhase.DELETING
            await self._delete_stale(seen)

    async def _first_load(self) -> AbstractAsyncContextManager[None]:
        """The store's bulk-load mode (:class:`BulkLoading`) when the index holds no documents yet: a first
        ingestion defers the store's per-row index upkeep to its end (success, failure or cancellation)."""
        store = self._resources.store
        if isinstance(store, BulkLoading) and not await store.document_id_page(self._name, after=None, limit=1):
            return store.bulk_load(self._name)
        return contextlib.nullcontext()

    async def ingest(self, documents: Sequence[RagDocument]) -> None:
        """Some documents through the same stages (incremental, atomic per document); nothing is deleted."""
        await self._resources.store.ensure_index(self._resources.spec)
        self._tracker.phase = RagIngestionPhase.INGESTING
        self._tracker.expect(len(documents))
        from runiq.rag._ingestion.seen import SeenIds

        unique: list[RagDocument] = []
        for document, new in zip(documents, SeenIds().add_all([d.document_id for d in documents]), strict=True):
            if new:
                unique.append(document)
            else:
                self._tracker.document_failed(self._name, document.document_id, "duplicate_document_id")
        self._tracker.add(discovered_documents=len(documents))

        async def windows() -> AsyncIterator[list[_Incoming]]:
            for start in range(0, len(unique), _WINDOW_DOCUMENTS):
                yield [(document, None) for document in unique[start : start + _WINDOW_DOCUMENTS]]

        await self._flow(windows())

    async def delete(self, document_ids: Sequence[str]) -> None:
        """The document API's delete: the documents and their chunks, in batches."""
        for start in range(0, len(document_ids), _ID_PAGE):
            await self._delete(list(document_ids[start : start + _ID_PAGE]))

    async def _from_sources(
        self, seen: SeenIds, accept: Callable[[str], bool] | None = None
    ) -> AsyncIterator[list[_Incoming]]:
        """Windows of new documents; failures, duplicates and unchanged ones are recorded a window at a time."""
        items: list[_Listed] = []
        characters = 0
        for source in self._resources.definition.sources:
            stream, chooser = self._stream(source, accept)
            kind = source.source_kind
            async for item in stream:
                if isinstance(item, SourceUnchanged):
                    ids = item.document_ids if accept is None else [d for d in item.document_ids if accept(d)]
                    items.extend([(document_id, None, kind, None) for document_id in ids])
                elif accept is not None and not accept(item.document_id):
                    continue  # another worker's share of a shared run (a skipped file is counted once, in its own)
                elif isinstance(item, SourceSkip):
                    self._tracker.add(skipped_files=1)  # not a document: no stored version is kept for it
                    continue
                else:
                    stamp = None if chooser is None else chooser.take(item.document_id)
                    items.append((item.document_id, item, kind, stamp))
                    characters += len(item.content) if isinstance(item, RagDocument) else 0
                if len(items) >= _WINDOW_DOCUMENTS or characters >= _WINDOW_CHARACTERS:
                    if window := self._sort_out(items, seen):
                        yield window
                    items, characters = [], 0
        window = self._sort_out(items, seen)
        self._tracker.expect(self._tracker.progress.discovered_documents)  # every source read to the end
        if window:
            yield window

    def _stream(
        self, source: DocumentSource, accept: Callable[[str], bool] | None
    ) -> tuple[AsyncIterator[StampedItem], StampChooser | None]:
        """Change detection by stamps when the source lists them and the store keeps them (:mod:`unchanged`)."""
        store = self._resources.store
        if isinstance(source, StampedSource) and isinstance(store, DocumentStamps):
            chooser = StampChooser(store, self._name, self._resources.configuration_fingerprint, accept)
            return source.stream_changed(chooser.choose), chooser
        return source.stream(), None

    def _sort_out(self, items: list[_Listed], seen: SeenIds) -> list[_Incoming]:
        """The new documents of ``items``; a failure is recorded (its stored version stays), an unchanged
        document is skipped, a repeated id fails as a duplicate (the first one is kept)."""
        self._tracker.add(discovered_documents=len(items))
        window: list[_Incoming] = []
        unchanged = 0
        news = seen.add_all([document_id for document_id, _, _, _ in items])
        for (document_id, item, kind, stamp), new in zip(items, news, strict=True):
            if isinstance(item, SourceFailure):
                self._tracker.document_failed(self._name, document_id, item.code, source_kind=kind)
            elif not new:
                self._tracker.document_failed(self._name, document_id, "duplicate_document_id", source_kind=kind)
            elif item is None:
                unchanged += 1
            else:
                window.append((item, stamp))
        self._tracker.add(processed_documents=unchanged, skipped_documents=unchanged)
        return window

    async def _flow(self, windows: AsyncIterator[list[_Incoming]]) -> None:
        to_embed: asyncio.Queue[_Group | None] = asyncio.Queue(maxsize=1)
        to_write: asyncio.Queue[_Embedded | None] = asyncio.Queue(maxsize=max(1, WRITE_CHUNKS // self._group_chunks))
        failure: BaseException | None = None
        try:
            async with asyncio.TaskGroup() as stages:
                stages.create_task(self._prepare_stage(windows, to_embed))
                stages.create_task(self._embed_stage(to_embed, to_write))
                for _ in range(_WRITERS):
                    stages.create_task(self._write_stage(to_write))
        except BaseExceptionGroup as group:
            failure = first_leaf(group)
        if failure is not None:
            raise failure  # the stage's own error, outside the handler: no group chained to it

    async def _prepare_stage(self, windows: AsyncIterator[list[_Incoming]], out: asyncio.Queue[_Group | None]) -> None:
        """Each window prepared whole, its documents sorted longest chunks first, then cut into groups: the
        groups (and the embedding batches in them) hold texts of similar length, so a local model pads
        little, as one ``encode`` of everything sorted by length would."""
        store = self._resources.store
        group: _Group = []
        chunks = 0  # in ``group``: counted as it grows (summing the group per document was quadratic)
        async for window in windows:
            stored = await store.document_hashes(self._name, [d.document_id for d, _ in window])
            pending = await self._prepare_window(window, stored)
            pending.sort(key=_longest_chunk, reverse=True)
            for document in pending:
                group.append(document)
                chunks += len(document.chunks)
                if chunks >= self._group_chunks:
                    await out.put(group)
                    group, chunks = [], 0
        if group:
            await out.put(group)
        await out.put(None)

    async def _prepare_window(self, window: list[_Incoming], stored: Mapping[str, str]) -> list[Pending]:
        """Hashed and chunked off the loop; skipped and failed documents are counted here. A document read
        again (its stamp changed) whose content hash is unchanged keeps its chunks and gets its new stamp."""
        documents = [document for document, _ in window]
        pending: list[Pending] = []
        restamped: dict[str, str] = {}
        position = 0
        while position < len(window):
            start = position
            with stage_span("chunk", index=self._name) as span:
                prepared, position = await prepare_off_loop(
                    functools.partial(
                        prepare_some,
                        documents,
                        position,
                        stored,
                        fingerprint=self._resources.configuration_fingerprint,
                        chunking=self._resources.definition.chunking,
                    )
                )
                span.counts(documents=len(prepared))
            for outcome, (document, stamp) in zip(prepared, window[start:position], strict=True):
                if outcome is None:
                    self._tracker.add(processed_documents=1, skipped_documents=1)
                    if stamp is not None:
                        restamped[document.document_id] = stamp
                elif isinstance(outcome, Unusable):
                    self._tracker.document_failed(self._name, document.document_id, outcome.code, outcome.error)
                else:
                    outcome.stamp = stamp
                    pending.append(outcome)
        store = self._resources.store
        if restamped and isinstance(store, DocumentStamps):
            await store.update_stamps(self._name, restamped)
        return pending

    async def _embed_stage(self, source: asyncio.Queue[_Group | None], out: asyncio.Queue[_Embedded | None]) -> None:
        while (group := await source.get()) is not None:
            with stage_span("embed", index=self._name, items=_chunks(group)):
                vectors = await self._embedder.embed(group)
            await out.put((group, vectors))
        for _ in range(_WRITERS):
            await out.put(None)

    async def _write_stage(self, source: asyncio.Queue[_Embedded | None]) -> None:
        """Until its end marker (each writer gets one): every group waiting, up to WRITE_CHUNKS, per write."""
        done = False
        while not done and (item := await source.get()) is not None:
            group, vectors = list(item[0]), list(item[1])
            chunks = _chunks(group)
            while chunks < WRITE_CHUNKS and not source.empty():
                more = source.get_nowait()
                if more is None:
                    done = True
                    break
                group += more[0]
                vectors += more[1]
                chunks += _chunks(more[0])
            with stage_span("write", index=self._name, items=len(group)):
                await self._writer.write(group, vectors)

    async def _delete_stale(self, seen: SeenIds) -> None:
        store = self._resources.store
        after: str | None = None
        stale: list[str] = []
        while page := list(await store.document_id_page(self._name, after=after, limit=_ID_PAGE)):
            stale.extend(seen.unseen(page))
            after = page[-1]
            if len(stale) >= _ID_PAGE:
                await self._delete(stale)
                stale = []
        if stale:
            await self._delete(stale)

    async def _delete(self, document_ids: list[str]) -> None:
        with stage_span("delete", index=self._name, items=len(document_ids)):
            deleted = await self._resources.store.delete_documents(self._name, document_ids)
        self._tracker.add(deleted_documents=deleted)


def _chunks(group: _Group) -> int:
    return sum(len(pending.chunks) for pending in group)


def _longest_chunk(pending: Pending) -> int:
    return max((len(chunk.content) for chunk in pending.chunks), default=0)

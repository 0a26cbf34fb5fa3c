"""Turning files a source has read into documents.

A file whose loader may run in a thread (:func:`~runiq.rag._loaders.loads_in_thread`: the linear text
formats, up to 2 MiB) is loaded right where it was read (:func:`load_here`, in the source's reading
thread: a hop to another thread per file cost more than decoding it). Every other file loads in a
:class:`~runiq.rag._loaders.LoaderPool` worker (:func:`load_files`): a batch concurrently (the pool
bounds how many run at once), coming back in the order it was read, so a source's stream stays in path
order. A file that cannot be loaded becomes a :class:`SourceFailure` with the loader's code
(``malformed``, ``encrypted``, ``timeout``...), never an exception: one hostile file never stops a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from runiq.rag._errors import RagValidationError
from runiq.rag._loaders.base import LoadedDocument, LoadOptions
from runiq.rag._loaders.errors import DocumentLoadError
from runiq.rag._loaders.pool import LoaderPool
from runiq.rag._loaders.registry import LoaderSpec
from runiq.rag._loaders.worker import load_checked
from runiq.rag._sources.base import SourceFailure, SourceItem, StampedItem

__all__ = ["FileRead", "load_files", "load_here"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file's bytes, its id (the path relative to the source root) and the loader that reads it."""

    document_id: str
    data: bytes
    loader: LoaderSpec


async def load_files(items: Sequence[StampedItem | FileRead], pool: LoaderPool) -> list[StampedItem]:
    """Every file of ``items`` loaded into a document or a failure; other items unchanged, in order.

    Only the files become tasks: a batch of documents loaded in the reading thread, or of unchanged
    files, goes through as it is (a task per item was most of a re-ingestion's event-loop time)."""
    files = [item for item in items if isinstance(item, FileRead)]
    loaded = iter(await asyncio.gather(*(_loaded(item, pool) for item in files)) if files else ())
    return [next(loaded) if isinstance(item, FileRead) else item for item in items]


def load_here(item: FileRead, max_characters: int) -> SourceItem:
    """``item`` loaded in this thread, with the checks a worker applies (for :func:`loads_in_thread` files)."""
    try:
        loaded = load_checked(item.loader.loader, item.data, LoadOptions(), max_characters)
    except DocumentLoadError as exc:
        return SourceFailure(document_id=item.document_id, code=exc.code.value)
    return _document(item.document_id, loaded)


async def _loaded(item: FileRead, pool: LoaderPool) -> SourceItem:
    try:
        loaded = await pool.load(item.loader.loader, item.data, isolated=item.loader.isolated)
    except DocumentLoadError as exc:
        return SourceFailure(document_id=item.document_id, code=exc.code.value)
    return _document(item.document_id, loaded)


def _document(document_id: str, loaded: LoadedDocument) -> SourceItem:
    """The source's document: the loader's title, else the file name's stem; the extension in metadata."""
    name = PurePosixPath(document_id)
    suffix = name.suffix.lower()
    try:
        return loaded.to_document(
            document_id, title=name.stem, metadata={"extension": suffix.lstrip(".")} if suffix else None
        )
    except RagValidationError:
        return SourceFailure(document_id=document_id, code="invalid_name")  # a blank file name, for one

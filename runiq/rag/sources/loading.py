"""Turning files a source has read into documents, through a :class:`~runiq.rag.loaders.LoaderPool`.

A batch of files loads concurrently (the pool bounds how many run at once) and comes back in the
order it was read, so a source's stream stays in path order. A file that cannot be loaded becomes a
:class:`SourceFailure` with the loader's code (``malformed``, ``encrypted``, ``timeout``...), never an
exception: one hostile file never stops a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from runiq.rag.errors import RagValidationError
from runiq.rag.loaders.errors import DocumentLoadError
from runiq.rag.loaders.pool import LoaderPool
from runiq.rag.loaders.registry import LoaderSpec
from runiq.rag.sources.base import SourceFailure, SourceItem, SourceSkip

__all__ = ["FileRead", "load_files"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file's bytes, its id (the path relative to the source root) and the loader that reads it."""

    document_id: str
    data: bytes
    loader: LoaderSpec


async def load_files(items: Sequence[FileRead | SourceFailure | SourceSkip], pool: LoaderPool) -> list[SourceItem]:
    """Every file of ``items`` loaded into a document or a failure; other items unchanged, in order."""
    return list(await asyncio.gather(*(_loaded(item, pool) for item in items)))


async def _loaded(item: FileRead | SourceFailure | SourceSkip, pool: LoaderPool) -> SourceItem:
    if not isinstance(item, FileRead):
        return item
    try:
        loaded = await pool.load(item.loader.loader, item.data, isolated=item.loader.isolated)
    except DocumentLoadError as exc:
        return SourceFailure(document_id=item.document_id, code=exc.code.value)
    name = PurePosixPath(item.document_id)
    suffix = name.suffix.lower()
    try:
        return loaded.to_document(
            item.document_id, title=name.stem, metadata={"extension": suffix.lstrip(".")} if suffix else None
        )
    except RagValidationError:
        return SourceFailure(document_id=item.document_id, code="invalid_name")  # a blank file name, for one

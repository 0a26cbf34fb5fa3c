"""Files under a directory, selected by the loaders that read them (or a glob pattern), loaded into
documents.

Selection (:mod:`runiq.rag.sources.selection`): by default every file a registered loader reads, by
extension; other files are yielded as :class:`SourceSkip` (counted as skipped, never failed). An
explicit pattern selects the files it matches, each read by its loader or as plain text.

Safety rules: the pattern must be a bare file-name pattern (no separators, no ``..``). The tree is
walked and read through directory handles (see :mod:`runiq.rag.sources.confined`): a component swapped
for a symlink after the walk cannot redirect a read outside the root. Symlinked directories are not
descended into; a matching symlink is read when it leads to a file inside the root and reported as
``outside_root`` when it leads outside. Files above ``max_file_bytes`` fail ``too_large`` unread;
every per-file problem (unreadable, a loader's code such as ``malformed`` or ``encrypted``, a symlink
loop, an unlistable subdirectory) is reported as a failure with a fixed code and an id relative to the
root, and never aborts the batch. Walking and reading run in a worker thread and stream: files are
read a small batch at a time as ingestion asks for them, and loaded in a
:class:`~runiq.rag.loaders.LoaderPool` (worker processes with a per-file time and memory budget, or a
thread for the linear text formats) that lives as long as the stream, so memory does not grow with the
tree and no worker outlives a run. Order is deterministic (by relative path).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from runiq.errors import call_translated, replacing
from runiq.rag.documents import RagDocument
from runiq.rag.errors import DocumentSourceError, RagConfigurationError
from runiq.rag.loaders.builtin import builtin_registry
from runiq.rag.loaders.pool import DEFAULT_MAX_FILE_BYTES, LoadBudget, LoaderPool, loads_in_thread
from runiq.rag.loaders.registry import LoaderRegistry
from runiq.rag.sources import confined
from runiq.rag.sources.base import SourceFailure, SourceItem, SourceReadResult, SourceSkip, read_all
from runiq.rag.sources.confined import ConfinedRoot, OutsideRoot, Parts, SymlinkLoop
from runiq.rag.sources.loading import FileRead, load_files, load_here
from runiq.rag.sources.selection import DEFAULT_PATTERN, FileSelection
from runiq.rag.sources.walk import iter_files

__all__ = ["DirectorySource"]

_BATCH_ITEMS = 64
_BATCH_BYTES = 4 * 1024 * 1024
_LOADER_WORKERS = 2

_Read = FileRead | SourceItem  # a file for the pool, or what the reading thread made of it


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectorySource:
    """``loaders`` decides which files are read and how (the host's registry, built-ins and plugins,
    when registered through ``use_directory``; the built-in loaders when None). ``max_file_bytes`` is
    also the loader budget's file size; ``max_documents`` caps the files read (those past it fail
    ``too_many_documents``)."""

    root: Path
    pattern: str = DEFAULT_PATTERN
    recursive: bool = False
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_documents: int | None = None  # no cap by default: documents stream, memory stays bounded
    loaders: LoaderRegistry | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        pattern = self.pattern.strip() if isinstance(self.pattern, str) else ""
        if not pattern or "/" in pattern or "\\" in pattern or "\x00" in pattern or ".." in pattern:
            raise RagConfigurationError("Directory source pattern must be a bare file-name pattern such as '*.md'.")
        if self.max_file_bytes <= 0 or (self.max_documents is not None and self.max_documents <= 0):
            raise RagConfigurationError("Directory source limits must be greater than zero.")
        # Lexical normalisation only: registration must not touch the file system.
        object.__setattr__(self, "root", Path(os.path.abspath(os.fspath(self.root))))
        object.__setattr__(self, "pattern", pattern)

    @property
    def source_kind(self) -> str:
        return "directory"

    @property
    def identity(self) -> str:
        return f"directory\n{self.root}\n{self.pattern}\n{'recursive' if self.recursive else 'top'}"

    async def stream(self) -> AsyncIterator[SourceItem]:
        """Walks and reads in a worker thread, a small batch at a time, and loads each batch in a loader
        pool that lives as long as the stream, so memory stays bounded and no worker outlives it."""
        selection = FileSelection(self.loaders if self.loaders is not None else builtin_registry(), self.pattern)
        items = self._iterate(selection)
        try:
            async with LoaderPool(self._budget, workers=_LOADER_WORKERS) as pool:
                while batch := await asyncio.to_thread(_next_batch, items):
                    for item in await load_files(batch, pool):
                        yield item
        finally:
            items.close()  # closes the directory handles, also when the consumer stops early

    @property
    def _budget(self) -> LoadBudget:
        return LoadBudget(max_file_bytes=self.max_file_bytes)

    async def read(self) -> SourceReadResult:
        """Everything at once (tests and small trees); ingestion uses :meth:`stream`."""
        return await read_all(self)

    def _iterate(self, selection: FileSelection) -> Generator[_Read, None, None]:
        if not confined.supported():
            raise DocumentSourceError("directory", "this platform cannot open files relative to a directory handle")
        # Raised outside ``except`` (call_translated): an OSError can name the root or a path under it.
        reason = "the root directory does not exist, is not a directory or cannot be opened"
        unopenable = DocumentSourceError("directory", reason)
        root = call_translated(lambda: ConfinedRoot(self.root), replacing(OSError, unopenable))
        with root:
            found = iter_files(root, selection.matches, recursive=self.recursive)
            unlistable = replacing(OSError, DocumentSourceError("directory", "the root directory could not be listed"))
            delivered = 0
            max_characters = self._budget.max_characters
            while (entry := call_translated(lambda: next(found, None), unlistable)) is not None:
                parts, code = entry
                item = self._item(root, parts, code, selection, delivered)
                if isinstance(item, FileRead):
                    delivered += 1
                    if loads_in_thread(isolated=item.loader.isolated, size=len(item.data)):
                        yield load_here(item, max_characters)
                        continue
                if item is not None:
                    yield item

    def _item(
        self, root: ConfinedRoot, parts: Parts, code: str | None, selection: FileSelection, delivered: int
    ) -> _Read | None:
        relative = _document_id(parts)
        if code is not None:
            return SourceFailure(document_id=_printable(relative), code=code)
        if not _is_text(relative):
            # Not valid UTF-8: report it under a printable id instead of emitting an unencodable one.
            return SourceFailure(document_id=_printable(relative), code="undecodable_name")
        loader = selection.loader_for(parts[-1])
        if loader is None:
            return SourceSkip(document_id=relative)
        if self.max_documents is not None and delivered >= self.max_documents:
            return SourceFailure(document_id=relative, code="too_many_documents")
        try:
            data = _read_regular_file(root, parts, self.max_file_bytes)
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone since the walk, or a dangling link inside the root
        except _TooLarge:
            return SourceFailure(document_id=relative, code="too_large")
        except OutsideRoot:
            return SourceFailure(document_id=relative, code="outside_root")
        except SymlinkLoop:
            return SourceFailure(document_id=relative, code="symlink_loop")
        except OSError:
            return SourceFailure(document_id=relative, code="unreadable")
        return None if data is None else FileRead(relative, data, loader)


class _TooLarge(Exception):
    pass


def _next_batch(items: Iterator[_Read]) -> list[_Read]:
    """Up to ``_BATCH_ITEMS`` items or about ``_BATCH_BYTES`` of file data, whichever comes first."""
    batch: list[_Read] = []
    size = 0
    for item in items:
        batch.append(item)
        if isinstance(item, FileRead):
            size += len(item.data)
        elif isinstance(item, RagDocument):
            size += len(item.content)
        if len(batch) >= _BATCH_ITEMS or size >= _BATCH_BYTES:
            break
    return batch


def _read_regular_file(root: ConfinedRoot, parts: Parts, limit: int) -> bytes | None:
    """The bytes of a regular file, or None for anything else; never more than ``limit`` even if it grows."""
    fd = root.open_file(parts)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > limit:
            raise _TooLarge
        data = _read_at_most(fd, limit + 1, expected=info.st_size)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _TooLarge
    return data


def _read_at_most(fd: int, count: int, *, expected: int) -> bytes:
    blocks: list[bytes] = []
    total, want = 0, expected + 1  # one read for a file that did not change since fstat
    while total < count:
        block = os.read(fd, min(want, count - total))
        if not block:
            break
        blocks.append(block)
        total += len(block)
        want = 1 << 16
    return b"".join(blocks)


def _document_id(parts: Parts) -> str:
    return "/".join(parts)


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(value: str) -> str:
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

"""Files under a directory, selected by the loaders that read them (or a glob pattern), loaded into
documents.

Selection (:mod:`runiq.rag._sources.selection`): by default every file a registered loader reads, by
extension; other files are yielded as :class:`SourceSkip` (counted as skipped, never failed). An
explicit pattern selects the files it matches, each read by its loader or as plain text.

Safety rules: the pattern must be a bare file-name pattern (no separators, no ``..``). The tree is
walked and read through directory handles (see :mod:`runiq.rag._sources.confined`): a component swapped
for a symlink after the walk cannot redirect a read outside the root. Symlinked directories are not
descended into; a matching symlink is read when it leads to a file inside the root and reported as
``outside_root`` when it leads outside. Files above ``max_file_bytes`` fail ``too_large`` unread;
every per-file problem (unreadable, a loader's code such as ``malformed`` or ``encrypted``, a symlink
loop, an unlistable subdirectory) is reported as a failure with a fixed code and an id relative to the
root, and never aborts the batch. Walking and reading run in a worker thread and stream: files are
read a small batch at a time as ingestion asks for them, and loaded in a
:class:`~runiq.rag._loaders.LoaderPool` (worker processes with a per-file time and memory budget, or a
thread for the linear text formats) that lives as long as the stream, so memory does not grow with the
tree and no worker outlives a run. Order is deterministic (by relative path).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import stat
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from runiq.errors import call_translated, replacing
from runiq.rag._documents import RagDocument
from runiq.rag._errors import DocumentSourceError, RagConfigurationError
from runiq.rag._loaders.builtin import builtin_registry
from runiq.rag._loaders.pool import DEFAULT_MAX_FILE_BYTES, LoadBudget, LoaderPool, loads_in_thread
from runiq.rag._loaders.registry import LoaderRegistry, LoaderSpec
from runiq.rag._sources import confined
from runiq.rag._sources.base import (
    ReadChooser,
    SourceFailure,
    SourceItem,
    SourceReadResult,
    SourceSkip,
    SourceStamp,
    SourceUnchanged,
    StampedItem,
    read_all,
)
from runiq.rag._sources.confined import ConfinedRoot, OutsideRoot, Parts, SymlinkLoop
from runiq.rag._sources.loading import FileRead, load_files, load_here
from runiq.rag._sources.selection import DEFAULT_PATTERN, FileSelection
from runiq.rag._sources.stamps import file_stamp, loader_salt
from runiq.rag._sources.walk import iter_files
from runiq.rag._threads import OwnThread

__all__ = ["DirectorySource"]

_BATCH_ITEMS = 64
_BATCH_BYTES = 4 * 1024 * 1024
_BATCH_ENTRIES = 1024  # items without file data (failures, skips, unchanged) per batch
_LOADER_WORKERS = 2
_STAMP_WINDOW = 1024  # candidates listed (and their stored stamps looked up) at a time

_Read = FileRead | StampedItem  # a file for the pool, or what the reading thread made of it


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
        async with aclosing(self._stream(None)) as items:
            async for item in items:
                if not isinstance(item, SourceUnchanged):  # always true: only a chooser leaves files unread
                    yield item

    def stream_changed(self, choose: ReadChooser) -> AsyncIterator[StampedItem]:
        """:class:`StampedSource`: lists (walk and ``lstat``) a window of candidates in a worker thread,
        lets ``choose`` pick those to read, then reads and loads them as :meth:`stream` does."""
        return self._stream(choose)

    async def _stream(self, choose: ReadChooser | None) -> AsyncGenerator[StampedItem, None]:
        tree = _Tree(self, stamped=choose is not None)
        listed = tree.listed()
        items: Iterator[_Read] = iter(())
        worker = OwnThread("runiq-directory")  # one arena for the whole stream (see ``_threads``)
        # The next window is listed while this one is chosen (a store lookup) and read: they overlap.
        following = asyncio.ensure_future(worker.run(tree.window, listed))
        try:
            async with LoaderPool(self._budget, workers=_LOADER_WORKERS) as pool:
                while (window := await following).entries:
                    following = asyncio.ensure_future(worker.run(tree.window, listed))
                    stamps = [entry for entry in window.entries if isinstance(entry, SourceStamp)]
                    chosen = await choose(stamps) if choose is not None and stamps else [True] * len(stamps)
                    items = tree.reads(window, chosen)
                    while batch := await worker.run(tree.batch, items):
                        for item in await load_files(batch, pool):
                            yield item
        finally:
            try:
                if not following.cancel() and not following.cancelled():
                    following.exception()  # retrieved: a listing error after the consumer stopped is not news
                # In its thread, after the batch in flight (a cancelled run leaves one behind): it holds the
                # handles. Shielded: a second cancellation while it waits behind that batch must not drop it.
                await asyncio.shield(worker.run(tree.close, listed, items))
            finally:
                worker.shutdown()

    @property
    def _budget(self) -> LoadBudget:
        return LoadBudget(max_file_bytes=self.max_file_bytes)

    async def read(self) -> SourceReadResult:
        """Everything at once (tests and small trees); ingestion uses :meth:`stream`."""
        return await read_all(self)


class _Candidate(NamedTuple):
    """A file a loader will read, once the walk has found it (not read yet)."""

    document_id: str
    parts: Parts
    loader: LoaderSpec


_Listed = _Candidate | SourceFailure | SourceSkip


@dataclass(slots=True)
class _Window:
    """Listed entries (candidates as ``choose`` sees them: id and stamp) and the candidates, by id."""

    entries: list[SourceStamp | SourceFailure | SourceSkip] = field(default_factory=list)
    candidates: dict[str, _Candidate] = field(default_factory=dict)


class _Tree:
    """One stream's walk of a source's tree: lists candidates, stamps them, reads them. Its methods run in
    worker threads, one at a time (the lock makes :meth:`close` wait for a batch still being read); the
    root is opened by the first listing."""

    def __init__(self, source: DirectorySource, *, stamped: bool) -> None:
        self._source = source
        registry = source.loaders if source.loaders is not None else builtin_registry()
        self._selection = FileSelection(registry, source.pattern)
        self._stamped = stamped
        self._root: ConfinedRoot | None = None
        self._salts: dict[int, str] = {}
        self._max_characters = source._budget.max_characters
        self._lock = threading.Lock()

    def close(self, *generators: Iterator[object]) -> None:
        with self._lock:
            for generator in generators:
                if isinstance(generator, Generator):
                    generator.close()
            if self._root is not None:
                self._root.close()
                self._root = None

    def listed(self) -> Generator[_Listed, None, None]:
        """Every file of the tree, classified (a candidate, a failure or a skip), in path order, unread."""
        if not confined.supported():
            raise DocumentSourceError("directory", "this platform cannot open files relative to a directory handle")
        # Raised outside ``except`` (call_translated): an OSError can name the root or a path under it.
        reason = "the root directory does not exist, is not a directory or cannot be opened"
        unopenable = DocumentSourceError("directory", reason)
        root = self._root = call_translated(lambda: ConfinedRoot(self._source.root), replacing(OSError, unopenable))
        found = iter_files(root, self._selection.matches, recursive=self._source.recursive)
        delivered = 0
        cap = self._source.max_documents
        while True:
            try:
                parts, code = next(found)
            except StopIteration:
                return
            except OSError:
                break
            item = self._classified(parts, code)
            if isinstance(item, _Candidate):
                if cap is not None and delivered >= cap:
                    item = SourceFailure(document_id=item.document_id, code="too_many_documents")
                else:
                    delivered += 1
            yield item
        # Raised outside ``except``: the OSError can name a path under the root.
        raise DocumentSourceError("directory", "the root directory could not be listed")

    def window(self, listed: Iterator[_Listed]) -> _Window:
        """Up to ``_STAMP_WINDOW`` listed entries, each candidate with its stamp (:mod:`stamps`; None when
        the stream is not stamped)."""
        with self._lock:
            window = _Window()
            entries, candidates = window.entries, window.candidates
            now = time.time_ns()
            stamped = self._stamped
            for item in itertools.islice(listed, _STAMP_WINDOW):
                if isinstance(item, _Candidate):
                    candidates[item.document_id] = item
                    entries.append(SourceStamp(item.document_id, self._stamp(item, now) if stamped else None))
                else:
                    entries.append(item)
            return window

    def batch(self, items: Iterator[_Read]) -> list[_Read]:
        with self._lock:
            return _next_batch(items)

    def reads(self, window: _Window, chosen: Sequence[bool]) -> Generator[_Read, None, None]:
        """The window's items: each chosen candidate read (a file for the pool, or loaded right here), each
        run of unchosen ones as one :class:`SourceUnchanged`; failures and skips as they are."""
        read_it = iter(chosen)
        unchanged: list[str] = []
        for entry in window.entries:
            if isinstance(entry, SourceStamp) and not next(read_it):
                unchanged.append(entry.document_id)
                continue
            if unchanged:
                yield SourceUnchanged(tuple(unchanged))
                unchanged = []
            if not isinstance(entry, SourceStamp):
                yield entry
                continue
            read = self._read(window.candidates[entry.document_id])
            if isinstance(read, FileRead) and loads_in_thread(isolated=read.loader.isolated, size=len(read.data)):
                yield load_here(read, self._max_characters)
            elif read is not None:
                yield read
        if unchanged:
            yield SourceUnchanged(tuple(unchanged))

    def _stamp(self, candidate: _Candidate, now: int) -> str | None:
        assert self._root is not None
        parts = candidate.parts
        try:
            info = os.stat(parts[-1], dir_fd=self._root.directory(parts[:-1]), follow_symlinks=False)
        except OSError:
            return None  # the read decides what it is
        if info.st_size > self._source.max_file_bytes:
            return None  # read, to fail ``too_large``
        salt = self._salts.get(id(candidate.loader))
        if salt is None:
            salt = self._salts[id(candidate.loader)] = loader_salt(self._salt_context, candidate.loader)
        return file_stamp(info, salt, now)

    @property
    def _salt_context(self) -> str:
        return f"{self._source.identity}\n{self._source.max_file_bytes}"

    def _classified(self, parts: Parts, code: str | None) -> _Listed:
        relative = "/".join(parts)  # the document id
        if code is not None:
            return SourceFailure(document_id=_printable(relative), code=code)
        if not relative.isascii() and not _is_text(relative):
            # Not valid UTF-8: report it under a printable id instead of emitting an unencodable one.
            return SourceFailure(document_id=_printable(relative), code="undecodable_name")
        loader = self._selection.loader_for(parts[-1])
        if loader is None:
            return SourceSkip(document_id=relative)
        return _Candidate(relative, parts, loader)

    def _read(self, candidate: _Candidate) -> _Read | None:
        assert self._root is not None
        relative = candidate.document_id
        try:
            data = _read_regular_file(self._root, candidate.parts, self._source.max_file_bytes)
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
        return None if data is None else FileRead(relative, data, candidate.loader)


class _TooLarge(Exception):
    pass


def _next_batch(items: Iterator[_Read]) -> list[_Read]:
    """Up to ``_BATCH_ITEMS`` files or about ``_BATCH_BYTES`` of file data, whichever comes first (and
    at most ``_BATCH_ENTRIES`` items in all)."""
    batch: list[_Read] = []
    size = files = 0
    for item in items:
        batch.append(item)
        if isinstance(item, FileRead):
            size += len(item.data)
            files += 1
        elif isinstance(item, RagDocument):
            size += len(item.content)
            files += 1
        if files >= _BATCH_ITEMS or size >= _BATCH_BYTES or len(batch) >= _BATCH_ENTRIES:
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


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(value: str) -> str:
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

"""Files under a directory, matched by a glob pattern, read as UTF-8 text.

Safety rules: the pattern must be a bare file-name pattern (no separators, no ``..``). The tree is
walked and read through directory handles (see :mod:`runiq.rag.sources.confined`): a component swapped
for a symlink after the walk cannot redirect a read outside the root. Symlinked directories are not
descended into; a matching symlink is read when it leads to a file inside the root and reported as
``outside_root`` when it leads outside. Files above ``max_file_bytes`` are skipped; every per-file
problem (unreadable, undecodable, a symlink loop, an unlistable subdirectory) is reported as a failure
with a fixed code and an id relative to the root, and never aborts the batch. Walking and reading run
in a worker thread and stream: documents are read a small batch at a time as ingestion asks for them,
so memory does not grow with the tree. Order is deterministic (by relative path).
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import AsyncIterator, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from runiq.errors import call_translated, replacing
from runiq.rag.documents import RagDocument
from runiq.rag.errors import DocumentSourceError, RagConfigurationError, RagValidationError
from runiq.rag.sources import confined
from runiq.rag.sources.base import SourceFailure, SourceItem, SourceReadResult, read_all
from runiq.rag.sources.confined import ConfinedRoot, OutsideRoot, Parts, SymlinkLoop
from runiq.rag.sources.walk import iter_files

__all__ = ["DirectorySource"]

_CONTENT_TYPES = {".md": "text/markdown", ".markdown": "text/markdown"}
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
_BATCH_ITEMS = 64
_BATCH_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectorySource:
    root: Path
    pattern: str = "*"
    recursive: bool = False
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_documents: int | None = None  # no cap by default: documents stream, memory stays bounded

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
        """Walks and reads in a worker thread, a small batch at a time, so memory stays bounded."""
        items = self._iterate()
        try:
            while batch := await asyncio.to_thread(_next_batch, items):
                for item in batch:
                    yield item
        finally:
            items.close()  # closes the directory handles, also when the consumer stops early

    async def read(self) -> SourceReadResult:
        """Everything at once (tests and small trees); ingestion uses :meth:`stream`."""
        return await read_all(self)

    def _iterate(self) -> Generator[SourceItem, None, None]:
        if not confined.supported():
            raise DocumentSourceError("directory", "this platform cannot open files relative to a directory handle")
        # Raised outside ``except`` (call_translated): an OSError can name the root or a path under it.
        reason = "the root directory does not exist, is not a directory or cannot be opened"
        unopenable = DocumentSourceError("directory", reason)
        root = call_translated(lambda: ConfinedRoot(self.root), replacing(OSError, unopenable))
        with root:
            matches = re.compile(fnmatch.translate(self.pattern)).fullmatch
            found = iter_files(root, matches, recursive=self.recursive)
            unlistable = replacing(OSError, DocumentSourceError("directory", "the root directory could not be listed"))
            delivered = 0
            while (entry := call_translated(lambda: next(found, None), unlistable)) is not None:
                parts, code = entry
                item = self._item(root, parts, code, delivered)
                if isinstance(item, RagDocument):
                    delivered += 1
                if item is not None:
                    yield item

    def _item(self, root: ConfinedRoot, parts: Parts, code: str | None, delivered: int) -> SourceItem | None:
        relative = _document_id(parts)
        if code is not None:
            return SourceFailure(document_id=_printable(relative), code=code)
        if not _is_text(relative):
            # Not valid UTF-8: report it under a printable id instead of emitting an unencodable one.
            return SourceFailure(document_id=_printable(relative), code="undecodable_name")
        if self.max_documents is not None and delivered >= self.max_documents:
            return SourceFailure(document_id=relative, code="too_many_documents")
        return self._read_one(root, parts, relative)

    def _read_one(self, root: ConfinedRoot, parts: Parts, relative: str) -> RagDocument | SourceFailure | None:
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
        if data is None:
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return SourceFailure(document_id=relative, code="undecodable")
        return _document(relative, text)


class _TooLarge(Exception):
    pass


def _next_batch(items: Iterator[SourceItem]) -> list[SourceItem]:
    """Up to ``_BATCH_ITEMS`` items or about ``_BATCH_BYTES`` of text, whichever comes first."""
    batch: list[SourceItem] = []
    size = 0
    for item in items:
        batch.append(item)
        size += len(item.content) if isinstance(item, RagDocument) else 0
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


def _document(relative: str, text: str) -> RagDocument | SourceFailure:
    stem, suffix = _stem_and_suffix(relative)
    suffix = suffix.lower()
    try:
        return RagDocument(
            document_id=relative,
            content=text,
            content_type=_CONTENT_TYPES.get(suffix, "text/plain"),
            title=stem,
            metadata={"title": stem, "extension": suffix.lstrip(".")} if suffix else {"title": stem},
        )
    except RagValidationError:
        return SourceFailure(document_id=relative, code="invalid_name")  # a blank file name, for one


def _stem_and_suffix(relative: str) -> tuple[str, str]:
    """``PurePosixPath(relative).stem`` and ``.suffix`` with string operations (a re-ingestion reads every
    file again, and building a path object per file was a tenth of its time)."""
    name = relative.rpartition("/")[2]
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        return name[:dot], name[dot:]
    return name, ""


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

"""Files under a directory, matched by a glob pattern, read as UTF-8 text.

Safety rules: the pattern must be a bare file-name pattern (no separators, no ``..``); every match is
resolved and must stay inside the resolved root, so symlinks cannot escape it; files above
``max_file_bytes`` are skipped; unreadable or undecodable files are reported as failures and never
abort the batch. Order is deterministic (by relative path).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from runiq.rag.documents import RagDocument
from runiq.rag.errors import DocumentSourceError, RagConfigurationError
from runiq.rag.sources.base import SourceFailure, SourceReadResult

__all__ = ["DirectorySource"]

_CONTENT_TYPES = {".md": "text/markdown", ".markdown": "text/markdown"}
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_DOCUMENTS = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectorySource:
    root: Path
    pattern: str = "*"
    recursive: bool = False
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_documents: int = DEFAULT_MAX_DOCUMENTS

    def __post_init__(self) -> None:
        pattern = self.pattern.strip() if isinstance(self.pattern, str) else ""
        if not pattern or "/" in pattern or "\\" in pattern or "\x00" in pattern or ".." in pattern:
            raise RagConfigurationError("Directory source pattern must be a bare file-name pattern such as '*.md'.")
        if self.max_file_bytes <= 0 or self.max_documents <= 0:
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

    async def read(self) -> SourceReadResult:
        return await asyncio.to_thread(self._read_sync)

    def _read_sync(self) -> SourceReadResult:
        if not self.root.is_dir():
            raise DocumentSourceError("directory", "the root directory does not exist or is not a directory")
        real_root = self.root.resolve()
        matches = self.root.rglob(self.pattern) if self.recursive else self.root.glob(self.pattern)
        candidates = sorted((p for p in matches), key=lambda p: p.relative_to(self.root).as_posix())
        documents: list[RagDocument] = []
        failures: list[SourceFailure] = []
        for path in candidates:
            relative = path.relative_to(self.root).as_posix()
            if not _is_text(relative):
                # Not valid UTF-8: report it under a printable id instead of emitting an unencodable one.
                failures.append(SourceFailure(document_id=_printable(relative), code="undecodable_name"))
                continue
            if len(documents) >= self.max_documents:
                failures.append(SourceFailure(document_id=relative, code="too_many_documents"))
                continue
            outcome = self._read_one(path, relative, real_root)
            if isinstance(outcome, SourceFailure):
                failures.append(outcome)
            elif outcome is not None:
                documents.append(outcome)
        return SourceReadResult(documents=tuple(documents), failures=tuple(failures))

    def _read_one(self, path: Path, relative: str, real_root: Path) -> RagDocument | SourceFailure | None:
        try:
            resolved = path.resolve()
            if not resolved.is_relative_to(real_root):
                return SourceFailure(document_id=relative, code="outside_root")
            if not resolved.is_file():
                return None
            if resolved.stat().st_size > self.max_file_bytes:
                return SourceFailure(document_id=relative, code="too_large")
            data = resolved.read_bytes()
        except OSError:
            return SourceFailure(document_id=relative, code="unreadable")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return SourceFailure(document_id=relative, code="undecodable")
        suffix = path.suffix.lower()
        return RagDocument(
            document_id=relative,
            content=text,
            content_type=_CONTENT_TYPES.get(suffix, "text/plain"),
            title=path.stem,
            metadata={"title": path.stem, "extension": suffix.lstrip(".")} if suffix else {"title": path.stem},
        )


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(value: str) -> str:
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

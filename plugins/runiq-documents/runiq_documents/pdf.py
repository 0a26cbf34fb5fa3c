"""PDF: the text layer of each page (pypdf, BSD, pure Python), pages joined by a form feed.

No OCR: a scanned PDF without a text layer loads as blank text, which the pool reports as ``empty``.
A PDF that opens with the empty user password (the common "protected from editing" kind, RC4 or AES)
is read; one that needs a password fails ``encrypted``. pypdf's own decompression limits surface as
``too_large``; anything it cannot parse (a truncated file) as ``malformed``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from runiq.rag.providers import (
    DocumentLoadError,
    LoadedDocument,
    LoadFailureCode,
    LoadOptions,
    MetadataValue,
    guarded,
    import_when_loading,
    one_line,
    parser_failures,
)

__all__ = ["PdfLoader"]

import_when_loading("pypdf", "pypdf.errors")


def _failures() -> dict[type[BaseException], LoadFailureCode]:
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, PyPdfError, WrongPasswordError

    return parser_failures(
        {
            FileNotDecryptedError: LoadFailureCode.ENCRYPTED,
            WrongPasswordError: LoadFailureCode.ENCRYPTED,
            DependencyError: LoadFailureCode.ENCRYPTED,  # an encryption this installation cannot undo
            LimitReachedError: LoadFailureCode.TOO_LARGE,
            PyPdfError: LoadFailureCode.MALFORMED,
        }
    )


@dataclass(frozen=True, slots=True)
class PdfLoader:
    name: str = "pdf"
    extensions: frozenset[str] = frozenset({".pdf"})
    media_types: frozenset[str] = frozenset({"application/pdf"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        return guarded(lambda: _load(data), _failures())


def _load(data: bytes) -> LoadedDocument:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise DocumentLoadError(LoadFailureCode.ENCRYPTED)
    pages = [page.extract_text() or "" for page in reader.pages]
    info = reader.metadata
    title = one_line(str(info.title)) if info is not None and info.title else ""
    metadata: dict[str, MetadataValue] = {}
    if info is not None:
        for key, value in (("author", info.author), ("subject", info.subject)):
            if value and one_line(str(value)):
                metadata[key] = one_line(str(value))
    return LoadedDocument.from_pages(pages, title=title or None, metadata=metadata)

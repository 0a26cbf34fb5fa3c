"""The loader boundary: what a loader returns (:class:`LoadedDocument`), what it is told
(:class:`LoadOptions`) and what it is (:class:`DocumentLoader`).

A loader is pure and synchronous: bytes in, text plus structure out. It runs in a worker process
(:class:`~runiq.rag._loaders.pool.LoaderPool`), so it must be picklable (a module-level class whose
state is plain data) and must not touch the file system, the network or global state.
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, TypeVar, runtime_checkable

from runiq.rag._documents import Metadata, MetadataValue, RagDocument, freeze_metadata
from runiq.rag._errors import RagConfigurationError, RagValidationError
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = [
    "PAGE_BREAK",
    "DocumentLoader",
    "Heading",
    "LoadOptions",
    "LoadedDocument",
    "PageSpan",
    "clean_text",
    "guarded",
    "parser_failures",
]

# PDF pages (and slides) are joined by a form feed, as the reference does; chunkers count the form
# feeds before a chunk to give it a ``page``.
PAGE_BREAK = "\f"

_EMPTY: Metadata = MappingProxyType({})
# NUL (no PostgreSQL text column takes it) and lone surrogates (not encodable as UTF-8) become U+FFFD:
# one character for one, so every offset a loader computed stays right.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class PageSpan:
    """Page ``number`` (1-based) is ``text[start:end]``; the break between pages belongs to no page."""

    number: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading the format itself marks (a DOCX heading style, an HTML ``<h2>``, a slide title or a
    sheet name), starting at ``text[start]``. ``level`` is 1 for the outermost."""

    level: int
    title: str
    start: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedDocument:
    """A file's text and the structure its format has.

    ``content_type`` picks the chunker: loaders that render headings as Markdown (``# Title``) say
    ``text/markdown`` so chunks get a ``section``. ``pages`` are in order and inside ``text``.
    ``metadata`` holds what the format records (author, sheet count, detected encoding), never the
    whole text.
    """

    text: str
    title: str | None = None
    content_type: str = "text/plain"
    pages: tuple[PageSpan, ...] = ()
    headings: tuple[Heading, ...] = ()
    metadata: Metadata = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise RagValidationError("A loaded document's text must be a string.")
        if self.title is not None and not isinstance(self.title, str):
            raise RagValidationError("A loaded document's title must be a string or None.")
        object.__setattr__(self, "text", clean_text(self.text))
        if self.title is not None:
            object.__setattr__(self, "title", clean_text(self.title))
        object.__setattr__(self, "pages", tuple(self.pages))
        headings = tuple(Heading(h.level, clean_text(h.title), h.start) for h in self.headings)
        object.__setattr__(self, "headings", headings)
        metadata = {
            clean_text(key) if isinstance(key, str) else key: _clean(value) for key, value in self.metadata.items()
        }
        object.__setattr__(self, "metadata", freeze_metadata(metadata))
        _check_spans(self)

    @classmethod
    def from_pages(
        cls,
        pages: list[str],
        *,
        title: str | None = None,
        content_type: str = "text/plain",
        metadata: Mapping[str, MetadataValue] | None = None,
    ) -> LoadedDocument:
        """Pages joined by :data:`PAGE_BREAK`, each page's span recorded (numbers from 1). A form feed
        inside a page's text becomes a newline, so counting form feeds still gives the page."""
        pages = [page.replace(PAGE_BREAK, "\n") for page in pages]
        spans: list[PageSpan] = []
        offset = 0
        for number, page in enumerate(pages, start=1):
            spans.append(PageSpan(number, offset, offset + len(page)))
            offset += len(page) + len(PAGE_BREAK)
        return cls(
            text=PAGE_BREAK.join(pages),
            title=title,
            content_type=content_type,
            pages=tuple(spans),
            metadata=metadata or {},
        )

    def to_document(
        self, document_id: str, *, title: str | None = None, metadata: Mapping[str, MetadataValue] | None = None
    ) -> RagDocument:
        """The :class:`RagDocument` a source hands to ingestion: the loader's title wins over ``title``
        (a file-name fallback) and is the ``title`` metadata too; otherwise the source's ``metadata``
        wins over the loader's on equal keys."""
        merged: dict[str, MetadataValue] = {**self.metadata, **(metadata or {})}
        chosen = self.title or title
        if chosen is not None:
            merged["title"] = chosen
        if self.pages:
            merged.setdefault("page_count", len(self.pages))
        return RagDocument(
            document_id=document_id,
            content=self.text,
            content_type=self.content_type,
            title=chosen,
            metadata=merged,
        )


def clean_text(text: str) -> str:
    """``text`` with characters no store can keep replaced by U+FFFD, length unchanged."""
    return _UNSTORABLE.sub("\ufffd", text)


def _clean(value: MetadataValue) -> MetadataValue:
    return clean_text(value) if isinstance(value, str) else value


def _check_spans(document: LoadedDocument) -> None:
    length = len(document.text)
    previous_end = 0
    for expected, page in enumerate(document.pages, start=1):
        if page.number != expected or not previous_end <= page.start <= page.end <= length:
            raise RagValidationError("Loaded pages must be numbered from 1, in order and inside the text.")
        previous_end = page.end
    for heading in document.headings:
        if heading.level < 1 or not 0 <= heading.start <= length:
            raise RagValidationError("Loaded headings must have a level from 1 and start inside the text.")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadOptions:
    """What a loader is told besides the bytes. Plain values, so it pickles into the worker.

    ``max_unpacked_bytes`` bounds what an archive-based format (DOCX, PPTX, XLSX) may inflate to, checked
    before parsing. ``json_text_field`` names the JSON field that holds the text (the reference's
    ``text``); ``json_metadata_fields`` are the top-level scalar fields copied into metadata (none unless
    configured); ``json_title_field`` names a field to use as the title.
    """

    max_unpacked_bytes: int = 256 * 1024 * 1024
    json_text_field: str = "text"
    json_title_field: str | None = None
    json_metadata_fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_unpacked_bytes <= 0:
            raise RagConfigurationError("Loader max_unpacked_bytes must be greater than zero.")
        if not self.json_text_field.strip():
            raise RagConfigurationError("Loader json_text_field must be a non-empty field name.")
        fields = tuple(self.json_metadata_fields)
        if not all(isinstance(name, str) and name.strip() for name in fields):
            raise RagConfigurationError("Loader json_metadata_fields must be non-empty field names.")
        object.__setattr__(self, "json_metadata_fields", fields)


@runtime_checkable
class DocumentLoader(Protocol):
    """Turns one file's bytes into a :class:`LoadedDocument`.

    ``extensions`` are lower case with a leading dot (``".pdf"``); ``media_types`` are MIME types
    (``"application/pdf"``). ``load`` raises :class:`~runiq.rag._loaders.DocumentLoadError` with a code
    for a file it cannot read (use :func:`guarded` to translate a parser's exceptions); anything else
    it raises is reported as ``failed``.
    """

    @property
    def name(self) -> str: ...

    @property
    def extensions(self) -> frozenset[str]: ...

    @property
    def media_types(self) -> frozenset[str]: ...

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument: ...


# What any parser raises on corrupt input, besides its own errors. A parser of hostile bytes that
# fails with TypeError or KeyError has met a file it does not understand, not a bug in runiq.
_CORRUPT_INPUT: tuple[type[BaseException], ...] = (
    RecursionError,  # before RuntimeError's other subclasses; nesting deeper than the stack
    ValueError,  # includes UnicodeError
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    AssertionError,
    EOFError,
    OSError,
    SyntaxError,  # lxml's XMLSyntaxError
    zipfile.BadZipFile,
    zlib.error,
    struct.error,
)


def parser_failures(
    specific: Mapping[type[BaseException], LoadFailureCode] | None = None,
) -> dict[type[BaseException], LoadFailureCode]:
    """A :func:`guarded` mapping: the format's own exceptions first, then ``MemoryError`` as
    ``too_large`` and whatever a parser raises on corrupt input as ``malformed``."""
    failures = dict(specific or {})
    failures.setdefault(MemoryError, LoadFailureCode.TOO_LARGE)
    for kind in _CORRUPT_INPUT:
        failures.setdefault(kind, LoadFailureCode.MALFORMED)
    return failures


def guarded(call: Callable[[], _T], failures: Mapping[type[BaseException], LoadFailureCode]) -> _T:
    """Run ``call``; an exception of a listed type becomes :class:`DocumentLoadError` with its code.

    The new error is raised after the ``except`` block has ended, so the parser's exception (whose
    message may quote the document) is neither its ``__cause__`` nor its ``__context__``. The first
    matching entry of ``failures`` wins, so list subclasses before their bases.
    """
    code: LoadFailureCode | None = None
    try:
        return call()
    except DocumentLoadError:
        raise
    except tuple(failures) as exc:
        code = next(code for kind, code in failures.items() if isinstance(exc, kind))
    assert code is not None
    raise DocumentLoadError(code)

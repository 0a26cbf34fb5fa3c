"""Document loaders: a file's bytes to text plus structure (title, headings, pages, metadata).

Loaders are registered through the ``runiq_register_loaders`` hook (the built-ins too) into a
:class:`LoaderRegistry`, resolved by file extension or media type, and run by a :class:`LoaderPool`
in worker processes within a :class:`LoadBudget`. A file that cannot be loaded raises
:class:`DocumentLoadError` with a :class:`LoadFailureCode`: a per-document failure, never a failed run.
"""

from __future__ import annotations

from runiq.rag._loaders.archives import open_zip
from runiq.rag._loaders.base import (
    PAGE_BREAK,
    DocumentLoader,
    Heading,
    LoadedDocument,
    LoadOptions,
    PageSpan,
    clean_text,
    guarded,
    parser_failures,
)
from runiq.rag._loaders.builder import MarkdownBuilder, one_line
from runiq.rag._loaders.builtin import BUILTIN_LOADERS, builtin_registry, register_builtin_loaders
from runiq.rag._loaders.csv_loader import CsvLoader, TsvLoader
from runiq.rag._loaders.deferred import import_when_loading
from runiq.rag._loaders.encoding import decode_text
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode
from runiq.rag._loaders.html_loader import HtmlLoader
from runiq.rag._loaders.json_loader import JsonLoader
from runiq.rag._loaders.markdown_headings import markdown_headings
from runiq.rag._loaders.pool import (
    DEFAULT_MAX_FILE_BYTES,
    IN_THREAD_MAX_BYTES,
    LoadBudget,
    LoaderPool,
    loads_in_thread,
)
from runiq.rag._loaders.registry import LoaderRegistry, LoaderSpec
from runiq.rag._loaders.tabular import cell_text, row_text, table_lines
from runiq.rag._loaders.text import MarkdownLoader, PlainTextLoader

__all__ = [
    "BUILTIN_LOADERS",
    "DEFAULT_MAX_FILE_BYTES",
    "IN_THREAD_MAX_BYTES",
    "PAGE_BREAK",
    "CsvLoader",
    "DocumentLoadError",
    "DocumentLoader",
    "Heading",
    "HtmlLoader",
    "JsonLoader",
    "LoadBudget",
    "LoadFailureCode",
    "LoadOptions",
    "LoadedDocument",
    "LoaderPool",
    "LoaderRegistry",
    "LoaderSpec",
    "MarkdownBuilder",
    "MarkdownLoader",
    "PageSpan",
    "PlainTextLoader",
    "TsvLoader",
    "builtin_registry",
    "cell_text",
    "clean_text",
    "decode_text",
    "guarded",
    "loads_in_thread",
    "markdown_headings",
    "import_when_loading",
    "one_line",
    "open_zip",
    "parser_failures",
    "register_builtin_loaders",
    "row_text",
    "table_lines",
]

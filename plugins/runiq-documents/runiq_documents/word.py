"""DOCX: the body in reading order as light Markdown (python-docx, MIT).

Paragraphs styled ``Title`` or ``Heading N`` become headings (so chunks get a ``section``), tables
become one ``Column: value`` line per row, page headers and footers are left out. The package is
checked by :func:`runiq.rag._loaders.open_zip` first (unpacked size, DTDs, encryption).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runiq.rag.providers import (
    LoadedDocument,
    LoadFailureCode,
    LoadOptions,
    MarkdownBuilder,
    MetadataValue,
    guarded,
    import_when_loading,
    one_line,
    open_zip,
    parser_failures,
    table_lines,
)

if TYPE_CHECKING:
    from docx.document import Document
    from docx.text.paragraph import Paragraph

__all__ = ["DocxLoader"]

import_when_loading("docx", "docx.exceptions", "docx.opc.exceptions", "docx.table")
_HEADING_STYLE = re.compile(r"^Heading ([1-9])$")


@dataclass(frozen=True, slots=True)
class DocxLoader:
    name: str = "docx"
    extensions: frozenset[str] = frozenset({".docx"})
    media_types: frozenset[str] = frozenset({"application/vnd.openxmlformats-officedocument.wordprocessingml.document"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        open_zip(data, options)
        return guarded(lambda: _load(_open(data)), _failures())


def _failures() -> dict[type[BaseException], LoadFailureCode]:
    from docx.exceptions import PythonDocxError
    from docx.opc.exceptions import OpcError

    return parser_failures({PythonDocxError: LoadFailureCode.MALFORMED, OpcError: LoadFailureCode.MALFORMED})


def _open(data: bytes) -> Document:
    import docx

    return docx.Document(io.BytesIO(data))


def _load(document: Document) -> LoadedDocument:
    from docx.table import Table

    builder = MarkdownBuilder()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            builder.paragraph("\n".join(table_lines([_cells(row) for row in block.rows])))
            continue
        level = _heading_level(block)
        if level:
            builder.heading(block.text, level)
        else:
            builder.paragraph(block.text)
    properties = document.core_properties
    metadata: dict[str, MetadataValue] = {}
    for key, value in (("author", properties.author), ("subject", properties.subject)):
        if value and one_line(value):
            metadata[key] = one_line(value)
    return builder.build(title=one_line(properties.title or "") or None, metadata=metadata)


def _heading_level(paragraph: Paragraph) -> int:
    name = paragraph.style.name if paragraph.style is not None else ""
    if name == "Title":
        return 1
    match = _HEADING_STYLE.match(name or "")
    return int(match.group(1)) if match else 0


def _cells(row: Any) -> list[str]:
    """A row's cell texts, a merged cell once (python-docx repeats it for every grid column it spans)."""
    texts: list[str] = []
    last = None
    for cell in row.cells:
        if cell._tc is not last:
            texts.append(cell.text)
            last = cell._tc
    return texts

"""PPTX: one page per slide, joined by a form feed (python-pptx, MIT), so chunks get the slide number
as their ``page``. The slide title is a heading; text boxes, tables (one ``Column: value`` line per row),
grouped shapes and the speaker notes follow in shape order. The package is checked by
:func:`runiq.rag._loaders.open_zip` first.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

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

__all__ = ["PptxLoader"]

import_when_loading("pptx", "pptx.exc")


def _failures() -> dict[type[BaseException], LoadFailureCode]:
    from pptx.exc import PythonPptxError

    return parser_failures({PythonPptxError: LoadFailureCode.MALFORMED})


@dataclass(frozen=True, slots=True)
class PptxLoader:
    name: str = "pptx"
    extensions: frozenset[str] = frozenset({".pptx"})
    media_types: frozenset[str] = frozenset(
        {"application/vnd.openxmlformats-officedocument.presentationml.presentation"}
    )

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        open_zip(data, options)
        return guarded(lambda: _load(_open(data)), _failures())


def _open(data: bytes) -> Any:
    import pptx

    return pptx.Presentation(io.BytesIO(data))


def _load(presentation: Any) -> LoadedDocument:
    builder = MarkdownBuilder()
    slides = 0
    for slide in presentation.slides:
        slides += 1
        builder.start_page()
        title = slide.shapes.title
        if title is not None and title.has_text_frame:
            builder.heading(title.text_frame.text, 1)
        for shape in _shapes(slide.shapes):
            if title is not None and shape.shape_id == title.shape_id:
                continue
            if shape.has_text_frame:
                builder.paragraph(shape.text_frame.text)
            elif getattr(shape, "has_table", False):
                rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
                builder.paragraph("\n".join(table_lines(rows)))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            builder.paragraph(slide.notes_slide.notes_text_frame.text)
    properties = presentation.core_properties
    metadata: dict[str, MetadataValue] = {"slide_count": slides}
    if properties.author and one_line(properties.author):
        metadata["author"] = one_line(properties.author)
    return builder.build(title=one_line(properties.title or "") or None, metadata=metadata)


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape in order, group members in place of their group, without recursion."""
    stack = [iter(shapes)]
    while stack:
        shape = next(stack[-1], None)
        if shape is None:
            stack.pop()
        elif hasattr(shape, "shapes"):  # a group
            stack.append(iter(shape.shapes))
        else:
            yield shape

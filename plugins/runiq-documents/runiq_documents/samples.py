"""Small valid files of each format, made in memory: for contract tests, examples and demos.

The PDF is written by hand (a text layer in Helvetica, one ``Tj`` per line) so that no PDF writer is a
dependency; the Office files are written with the same libraries that read them.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import docx
import openpyxl
import pptx

__all__ = ["docx_bytes", "pdf_bytes", "pptx_bytes", "xlsx_bytes"]


def _pdf_text(text: str) -> bytes:
    """A PDF literal string in WinAnsiEncoding (Windows-1252), with its delimiters escaped."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("cp1252", "replace") + b")"


def _pdf_info_text(text: str) -> bytes:
    """A PDF text string for the document information (UTF-16BE with its byte-order mark, in hex)."""
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


def pdf_bytes(pages: Sequence[str], *, title: str | None = None, author: str | None = None) -> bytes:
    """A PDF with one page per string (lines split on newlines) and an information dictionary."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b"", b""]
    objects[2] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    kids = []
    for text in pages:
        lines = b" T* ".join(_pdf_text(line) + b" Tj" for line in text.split("\n"))
        stream = b"BT /F1 12 Tf 14 TL 72 720 Td " + lines + b" ET"
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (len(objects))
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    info = [
        b"/Title " + _pdf_info_text(title) if title else b"",
        b"/Author " + _pdf_info_text(author) if author else b"",
    ]
    objects.append(b"<< " + b" ".join(part for part in info if part) + b" >>")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\n" % (len(objects) + 1, len(objects)))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def docx_bytes(
    *,
    title: str,
    author: str,
    sections: Sequence[tuple[str, Sequence[str]]],
    table: Sequence[Sequence[str]] = (),
) -> bytes:
    """A DOCX: a Title paragraph, a Heading 1 and its paragraphs per section, then an optional table."""
    document = docx.Document()
    document.core_properties.title = title
    document.core_properties.author = author
    document.add_heading(title, level=0)
    for heading, paragraphs in sections:
        document.add_heading(heading, level=1)
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    document.sections[0].header.paragraphs[0].text = "Page header (boilerplate)"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pptx_bytes(*, title: str, author: str, slides: Sequence[tuple[str, Sequence[str], str]]) -> bytes:
    """A PPTX with one title-and-content slide per ``(title, bullet lines, speaker notes)``."""
    presentation = pptx.Presentation()
    presentation.core_properties.title = title
    presentation.core_properties.author = author
    layout = presentation.slide_layouts[1]
    for heading, bullets, notes in slides:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = heading
        slide.placeholders[1].text_frame.text = "\n".join(bullets)
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def xlsx_bytes(*, title: str, author: str, sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    """An XLSX with one sheet per name, its rows as given (the first row names the columns)."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.worksheets[0])  # a new workbook has one empty sheet; the named ones replace it
    workbook.properties.title = title
    workbook.properties.creator = author
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()

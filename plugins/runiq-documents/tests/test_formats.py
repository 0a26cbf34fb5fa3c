"""PDF, DOCX, PPTX and XLSX made in the test: text found, pages and headings where they belong,
metadata from the format, boilerplate absent, and hostile or protected files failing with their code."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from runiq.rag._loaders import PAGE_BREAK, DocumentLoadError, LoadedDocument, LoadFailureCode, LoadOptions
from runiq_documents import DocxLoader, PdfLoader, PptxLoader, XlsxLoader
from runiq_documents.samples import pdf_bytes, pptx_bytes, xlsx_bytes

OPTIONS = LoadOptions()
PAGES = ["Première page: café costs €5\nsecond line", "Page two (with parens) and a \\ backslash", "Third"]


def _failure(loader: object, data: bytes, options: LoadOptions = OPTIONS) -> LoadFailureCode:
    with pytest.raises(DocumentLoadError) as caught:
        loader.load(data, options=options)  # type: ignore[attr-defined]
    assert caught.value.__context__ is None
    return caught.value.code


def _page_texts(document: LoadedDocument) -> list[str]:
    for page in document.pages:  # the chunkers' page rule holds for every span
        assert document.text.count(PAGE_BREAK, 0, page.start) + 1 == page.number
    return [document.text[page.start : page.end] for page in document.pages]


def test_pdf_pages_are_joined_by_form_feeds_with_exact_offsets() -> None:
    document = PdfLoader().load(pdf_bytes(PAGES, title="Handbook — 2024", author="HR Team"), options=OPTIONS)
    assert _page_texts(document) == PAGES
    assert document.text == PAGE_BREAK.join(PAGES)
    assert (document.title, dict(document.metadata)) == ("Handbook — 2024", {"author": "HR Team"})
    assert document.to_document("handbook.pdf").metadata["page_count"] == 3


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-256"])
def test_pdf_protected_only_by_an_owner_password_is_read(algorithm: str, hostile: SimpleNamespace) -> None:
    """The common "protected from editing" PDF opens with the empty user password, RC4 or AES."""
    data = hostile.encrypted_pdf(pdf_bytes(PAGES), user="", owner="owner-secret", algorithm=algorithm)
    assert _page_texts(PdfLoader().load(data, options=OPTIONS)) == PAGES


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-256"])
def test_pdf_that_needs_a_password_is_encrypted(algorithm: str, hostile: SimpleNamespace) -> None:
    data = hostile.encrypted_pdf(pdf_bytes(PAGES), user="user-secret", owner="owner-secret", algorithm=algorithm)
    assert _failure(PdfLoader(), data) is LoadFailureCode.ENCRYPTED


@pytest.mark.parametrize("fraction", [0.2, 0.5, 0.8])
def test_truncated_pdf_is_malformed(fraction: float) -> None:
    data = pdf_bytes(PAGES)
    assert _failure(PdfLoader(), data[: int(len(data) * fraction)]) is LoadFailureCode.MALFORMED


def test_pdf_without_a_text_layer_loads_as_blank_text() -> None:
    """No OCR: a scanned page has no text; the pool reports such a file as 'empty'."""
    document = PdfLoader().load(pdf_bytes(["", ""]), options=OPTIONS)
    assert not document.text.strip()
    assert len(document.pages) == 2


def test_pdf_decompression_bomb_is_too_large(hostile: SimpleNamespace) -> None:
    """pypdf's own inflate limit stops a content stream that inflates to 128 MiB from ~130 KB."""
    assert _failure(PdfLoader(), hostile.flate_bomb_pdf(128 * 1024 * 1024)) is LoadFailureCode.TOO_LARGE


def test_docx_headings_become_sections_and_the_page_header_is_left_out(hostile: SimpleNamespace) -> None:
    document = DocxLoader().load(hostile.docx, options=OPTIONS)
    assert document.content_type == "text/markdown"
    assert document.text == (
        "# Leave policy\n\n# Annual leave\n\nEveryone gets 25 days.\n\n\\# Not a heading\n\n"
        "# Sick leave\n\nCall in.\n\nType: Annual; Days: 25\nType: Sick"
    )
    assert "Page header" not in document.text
    assert [(h.title, document.text[h.start :].startswith(f"# {h.title}")) for h in document.headings] == [
        ("Leave policy", True),
        ("Annual leave", True),
        ("Sick leave", True),
    ]
    assert (document.title, dict(document.metadata)) == ("Leave policy", {"author": "Jane Doe"})


def test_docx_zip_bomb_is_too_large_and_billion_laughs_malformed(hostile: SimpleNamespace) -> None:
    bomb = hostile.zip_bomb_docx(64 * 1024 * 1024)
    assert _failure(DocxLoader(), bomb, LoadOptions(max_unpacked_bytes=32 * 1024 * 1024)) is LoadFailureCode.TOO_LARGE
    assert _failure(DocxLoader(), hostile.billion_laughs_docx()) is LoadFailureCode.MALFORMED


def test_office_files_saved_with_a_password_are_encrypted() -> None:
    """Office writes a password-protected file as an OLE compound file whatever its extension."""
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(8192)
    for loader in (DocxLoader(), PptxLoader(), XlsxLoader()):
        assert _failure(loader, ole) is LoadFailureCode.ENCRYPTED


def test_a_pdf_named_docx_is_malformed() -> None:
    assert _failure(DocxLoader(), pdf_bytes(["x"])) is LoadFailureCode.MALFORMED


def test_pptx_slides_are_pages_with_their_titles_as_headings() -> None:
    slides = [("Goals", ["Ship v1", "Hire two"], "Remember the budget"), ("Blank", [], ""), ("Timeline", ["Q1"], "")]
    document = PptxLoader().load(pptx_bytes(title="Kickoff", author="PMO", slides=slides), options=OPTIONS)
    assert _page_texts(document) == [
        "# Goals\n\nShip v1\nHire two\n\nRemember the budget",
        "# Blank",
        "# Timeline\n\nQ1",
    ]
    assert [h.title for h in document.headings] == ["Goals", "Blank", "Timeline"]
    assert (document.title, dict(document.metadata)) == ("Kickoff", {"slide_count": 3, "author": "PMO"})


def test_xlsx_sheets_are_sections_and_rows_readable_lines() -> None:
    sheets = {
        "Per diem": [
            ["City", "Rate", "Since"],
            ["Zürich", 60, dt.date(2024, 1, 1)],
            [None, None, None],
            ["Bern", 55.5],
        ],
        "Contacts": [["Name", None, "Phone"], ["Ana", "extra", "+41 1"]],
    }
    document = XlsxLoader().load(xlsx_bytes(title="Rates", author="Finance", sheets=sheets), options=OPTIONS)
    assert document.text == (
        "# Per diem\n\nCity: Zürich; Rate: 60; Since: 2024-01-01\nCity: Bern; Rate: 55.5\n\n"
        "# Contacts\n\nName: Ana; Column 2: extra; Phone: +41 1"
    )
    assert [h.title for h in document.headings] == ["Per diem", "Contacts"]
    assert (document.title, dict(document.metadata)) == ("Rates", {"sheet_count": 2, "author": "Finance"})

"""Chunks record where they lie: start/end offsets always, the page where the document has pages."""

from __future__ import annotations

from runiq.rag._chunking import ChunkingOptions, chunker_for
from runiq.rag._chunking.positions import ChunkPositions
from runiq.rag._documents import RagChunk, RagDocument
from runiq.rag._loaders import LoadedDocument, MarkdownBuilder

OPTIONS = ChunkingOptions(max_characters=60, overlap=0)


def _chunks(document: RagDocument) -> list[RagChunk]:
    return chunker_for(document, OPTIONS).chunk(document)


def test_every_chunk_records_its_offsets_and_a_pageless_document_no_page() -> None:
    """start_offset/end_offset are the chunk's own slice of the text; text without a form feed has no page."""
    content = " ".join(f"Sentence number {n} of a plain text." for n in range(12))
    chunks = _chunks(RagDocument(document_id="a.txt", content=content))
    assert len(chunks) > 3
    for chunk in chunks:
        start, end = chunk.metadata["start_offset"], chunk.metadata["end_offset"]
        assert (start, end) == (chunk.start, chunk.end)
        assert content[start:end] == chunk.content
        assert "page" not in chunk.metadata


def test_a_paged_document_is_chunked_page_by_page() -> None:
    """Pages joined by form feeds (the PDF loader's text): no chunk runs over a break, so each chunk's
    page is the page of all its text, whatever the chunk size; blank pages give no chunk."""
    pages = [f"Page {n} talks about topic{n} in a few words. " * 2 for n in (1, 2, 3)] + [" \n"]
    loaded = LoadedDocument.from_pages(pages)
    document = loaded.to_document("handbook.pdf")
    for options in (OPTIONS, ChunkingOptions(max_characters=4000, overlap=100)):
        chunks = chunker_for(document, options).chunk(document)
        assert {chunk.metadata["page"] for chunk in chunks} == {1, 2, 3}
        for chunk in chunks:
            page = loaded.pages[int(str(chunk.metadata["page"])) - 1]
            assert page.start <= chunk.start < chunk.end <= page.end
            assert document.content[chunk.start : chunk.end] == chunk.content
            assert f"topic{page.number}" in chunk.content
    assert len(chunker_for(document, ChunkingOptions(max_characters=4000, overlap=100)).chunk(document)) == 3


def test_markdown_with_pages_keeps_its_section_and_gets_a_page() -> None:
    """Slides rendered as Markdown: the heading still gives 'section', the form feed gives 'page'."""
    builder = MarkdownBuilder()
    for title in ("Why", "Rule"):
        builder.start_page()
        builder.heading(title, 1)
        builder.paragraph(f"The slide about {title.lower()} says something worth finding.")
    document = builder.build(title="Kickoff").to_document("kickoff.pptx")
    by_page = {chunk.metadata["page"]: chunk for chunk in _chunks(document)}
    assert by_page[1].metadata["section"] == "Why"
    assert by_page[2].metadata["section"] == "Rule"
    assert "about rule" in by_page[2].content


def test_a_chunk_starting_on_a_break_belongs_to_the_page_after_it() -> None:
    """Breaks at or before a chunk's start count; the break character itself opens the next page."""
    positions = ChunkPositions("one\ftwo\fthree")
    assert positions(0, 3) == {"start_offset": 0, "end_offset": 3, "page": 1}
    assert positions(3, 7)["page"] == 2
    assert positions(4, 7)["page"] == 2
    assert positions(8, 13)["page"] == 3
    assert "page" not in ChunkPositions("no breaks")(0, 2)

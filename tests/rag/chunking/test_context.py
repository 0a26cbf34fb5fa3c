"""What a chunk is indexed under: its title and section path in front of its content, never repeated."""

from __future__ import annotations

from runiq.rag import RagDocument
from runiq.rag._chunking import ChunkingOptions, MarkdownChunker
from runiq.rag._chunking.context import chunk_context, chunk_indexed_text, indexed_text


def test_title_and_section_lead_the_indexed_text() -> None:
    metadata = {"title": "Remote work guide", "section": "Policy > Eligibility"}
    text = indexed_text("docs/guide.md", "Employees may apply after probation.", metadata)
    assert text == "Remote work guide\nPolicy\nEligibility\n\nEmployees may apply after probation."


def test_content_without_context_is_indexed_as_it_is() -> None:
    assert indexed_text("a.txt", "Plain text.", {}) == "Plain text."
    assert indexed_text("a.txt", "Plain text.", {"title": 3, "section": ["x"]}) == "Plain text."  # not strings


def test_a_file_name_title_is_not_carried() -> None:
    """A directory source's fallback title (the file name) says little and would be on every chunk."""
    assert chunk_context("2024/0042.txt", "Some text.", {"title": "0042"}) == ""
    assert chunk_context("notes.md", "Some text.", {"title": "notes", "section": "Setup"}) == "Setup"


def test_context_the_content_holds_is_not_repeated() -> None:
    """The chunk opening with its heading, or a title that is also the top heading, adds nothing twice."""
    content = "## Eligibility\n\nEmployees may apply."
    metadata = {"title": "Guide", "section": "Guide > Eligibility"}
    assert chunk_context("g.md", content, metadata) == "Guide"
    assert chunk_context("g.md", "# Guide\n\n## Eligibility\n\nText.", metadata) == ""


def test_whitespace_in_context_is_collapsed_and_its_length_bounded() -> None:
    assert chunk_context("d", "x", {"title": "  Remote\n work  "}) == "Remote work"
    assert len(chunk_context("d", "x", {"title": "t" * 5000})) == 1000


def test_markdown_chunks_carry_their_section_path() -> None:
    """The Markdown chunker's section metadata is what a later chunk is indexed under."""
    body = " ".join(["Employees may work remotely two days a week."] * 30)
    document = RagDocument(
        document_id="policy.md", content=f"# Remote work\n\n## Eligibility\n\n{body}", content_type="text/markdown"
    )
    chunks = MarkdownChunker(ChunkingOptions(max_characters=300, overlap=0)).chunk(document)
    assert len(chunks) > 2
    last = chunks[-1]
    assert chunk_indexed_text(last) == f"Remote work\nEligibility\n\n{last.content}"

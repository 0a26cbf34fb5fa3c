"""TextChunker and MarkdownChunker: offsets, identities, overlap, sections and option validation."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runiq.rag import RagConfigurationError, RagDocument
from runiq.rag._chunking import ChunkingOptions, MarkdownChunker, TextChunker, chunker_for

WORDS = " ".join(f"word{i}" for i in range(400))


def _doc(content: str, content_type: str = "text/plain", **metadata: object) -> RagDocument:
    return RagDocument(document_id="docs/a.md", content=content, content_type=content_type, metadata=metadata)


@pytest.mark.parametrize(("max_characters", "overlap"), [(0, 0), (-1, 0), (10, -1), (10, 10), (10, 11)])
def test_chunking_options_are_validated_on_construction(max_characters: int, overlap: int) -> None:
    """max <= 0, overlap < 0 and overlap >= max are RagConfigurationError."""
    with pytest.raises(RagConfigurationError):
        ChunkingOptions(max_characters=max_characters, overlap=overlap)


def test_chunking_defaults_are_1000_and_100() -> None:
    """The default window is 1000 characters with 100 characters of overlap."""
    options = ChunkingOptions()
    assert (options.max_characters, options.overlap) == (1000, 100)


def test_fingerprint_changes_with_the_options() -> None:
    """The chunking fingerprint (part of the content hash) differs for different options."""
    assert (
        ChunkingOptions(max_characters=100, overlap=10).fingerprint
        != ChunkingOptions(max_characters=100, overlap=20).fingerprint
    )


@pytest.mark.parametrize("content", ["", "   ", "\n\t \n"])
@pytest.mark.parametrize("chunker_type", [TextChunker, MarkdownChunker])
def test_empty_or_whitespace_content_gives_no_chunks(chunker_type: type, content: str) -> None:
    """Nothing to index gives an empty chunk list."""
    assert chunker_type(ChunkingOptions()).chunk(_doc(content)) == []


def test_short_content_is_one_chunk_covering_the_document() -> None:
    """Content within the limit is a single chunk [0, len)."""
    document = _doc("Remote work is allowed three days a week.")
    (chunk,) = TextChunker(ChunkingOptions()).chunk(document)
    assert (chunk.start, chunk.end, chunk.content) == (0, len(document.content), document.content)
    assert (chunk.document_id, chunk.chunk_id, chunk.ordinal) == ("docs/a.md", "docs/a.md#0", 0)


def test_text_chunks_are_exact_slices_with_sequential_ids() -> None:
    """content == document.content[start:end]; ids are "{document_id}#{ordinal}" in order."""
    document = _doc(WORDS)
    chunks = TextChunker(ChunkingOptions(max_characters=120, overlap=20)).chunk(document)
    assert len(chunks) > 5
    for ordinal, chunk in enumerate(chunks):
        assert chunk.content == document.content[chunk.start : chunk.end]
        assert chunk.ordinal == ordinal
        assert chunk.chunk_id == f"docs/a.md#{ordinal}"
        assert len(chunk.content) <= 120
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


def test_overlap_makes_neighbouring_chunks_share_text() -> None:
    """With overlap, each chunk starts before the previous one ends; without, they never overlap."""
    document = _doc(WORDS)
    overlapping = TextChunker(ChunkingOptions(max_characters=100, overlap=30)).chunk(document)
    disjoint = TextChunker(ChunkingOptions(max_characters=100, overlap=0)).chunk(document)
    assert all(b.start < a.end for a, b in itertools.pairwise(overlapping))
    assert all(b.start >= a.end for a, b in itertools.pairwise(disjoint))
    assert len(overlapping) > len(disjoint)


def test_chunking_is_deterministic() -> None:
    """The same document always gives the same chunks (identities and offsets)."""
    document = _doc(WORDS)
    options = ChunkingOptions(max_characters=90, overlap=10)
    assert TextChunker(options).chunk(document) == TextChunker(options).chunk(document)


def test_chunks_carry_the_document_metadata() -> None:
    """Every chunk gets the document's metadata."""
    chunks = TextChunker(ChunkingOptions(max_characters=100, overlap=0)).chunk(_doc(WORDS, title="HR", year=2024))
    assert len(chunks) > 1
    assert all(chunk.metadata["title"] == "HR" and chunk.metadata["year"] == 2024 for chunk in chunks)


MARKDOWN = """# Policy

Intro text for the policy.

## Scope

Scope text applies to every employee of the company and contractors.

### Exceptions

Exceptions are approved by HR.

# Travel

Travel text about receipts.
"""


def test_markdown_chunks_record_their_section_path() -> None:
    """Each Markdown chunk records the heading path it starts under as ``section``."""
    document = _doc(MARKDOWN, "text/markdown")
    chunks = MarkdownChunker(ChunkingOptions(max_characters=80, overlap=0)).chunk(document)
    sections = {chunk.content.splitlines()[0]: chunk.metadata.get("section") for chunk in chunks}
    assert sections["# Policy"] == "Policy"
    assert sections["## Scope"] == "Policy > Scope"
    assert sections["### Exceptions"] == "Policy > Scope > Exceptions"
    assert sections["# Travel"] == "Travel"
    assert all(chunk.content == document.content[chunk.start : chunk.end] for chunk in chunks)


def test_markdown_text_before_any_heading_has_no_section() -> None:
    """A chunk before the first heading carries no ``section`` key."""
    document = _doc("Preamble without heading.\n\n# Heading\n\nBody.", "text/markdown")
    chunks = MarkdownChunker(ChunkingOptions(max_characters=30, overlap=0)).chunk(document)
    assert chunks[0].content.startswith("Preamble")
    assert "section" not in chunks[0].metadata
    assert chunks[-1].metadata["section"] == "Heading"


def test_markdown_chunker_splits_at_headings() -> None:
    """Sections are kept apart when they fit: no chunk spans two top-level headings."""
    document = _doc(MARKDOWN, "text/markdown")
    chunks = MarkdownChunker(ChunkingOptions(max_characters=120, overlap=0)).chunk(document)
    assert not any("# Policy" in c.content and "# Travel" in c.content for c in chunks)


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [("text/markdown", MarkdownChunker), ("text/x-markdown", MarkdownChunker), ("text/plain", TextChunker)],
)
def test_chunker_for_picks_by_content_type(content_type: str, expected: type) -> None:
    """Markdown documents get the heading-aware chunker, everything else the text chunker."""
    assert isinstance(chunker_for(_doc("x", content_type), ChunkingOptions()), expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    content=st.text(min_size=1, max_size=600),
    max_characters=st.integers(min_value=5, max_value=200),
    overlap_ratio=st.floats(min_value=0.0, max_value=0.9),
    markdown=st.booleans(),
)
def test_chunks_are_exact_slices_for_any_text(
    content: str, max_characters: int, overlap_ratio: float, markdown: bool
) -> None:
    """For any Unicode text and options, every chunk is an exact, ordered slice with sequential ids."""
    options = ChunkingOptions(max_characters=max_characters, overlap=int(max_characters * overlap_ratio))
    document = _doc(content, "text/markdown" if markdown else "text/plain")
    chunker = MarkdownChunker(options) if markdown else TextChunker(options)
    chunks = chunker.chunk(document)
    if not content.strip():
        assert chunks == []
        return
    assert chunks
    for ordinal, chunk in enumerate(chunks):
        assert 0 <= chunk.start < chunk.end <= len(content)
        assert chunk.content == content[chunk.start : chunk.end]
        assert chunk.chunk_id == f"{document.document_id}#{ordinal}"
    assert chunker.chunk(document) == chunks

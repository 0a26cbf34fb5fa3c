"""The Markdown heading scan: CommonMark's heading rules in one linear pass."""

from __future__ import annotations

from runiq.rag._loaders import markdown_headings


def _found(text: str) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in markdown_headings(text)]


def test_atx_headings_with_indent_closing_runs_and_their_starts() -> None:
    """Up to three spaces of indent; a closing '#' run only after a space; '#tag' and 7 '#' are text."""
    text = "# One\n   ## Two ##\n### C# and F#\n#tag\n####### seven\n    # code\n## \n#\tTab\n"
    assert _found(text) == [(1, "One"), (2, "Two"), (3, "C# and F#"), (1, "Tab")]
    for heading in markdown_headings(text):
        assert text[heading.start :].lstrip(" ").startswith("#")


def test_no_heading_inside_fences_comments_or_indented_code() -> None:
    """Backtick and tilde fences (closed by a run at least as long), HTML comments, indented code."""
    text = (
        "```python\n# not\n```\n~~~~\n# not\n~~~\n# still not\n~~~~\n"
        "<!-- a comment\n# not\n-->\n\n    # not\n\n## Yes\n````\nunclosed\n# not\n"
    )
    assert _found(text) == [(2, "Yes")]


def test_setext_headings_underline_a_paragraph_only() -> None:
    """'===' and '---' under a paragraph make it a heading (level 1 and 2); after a blank line, a list
    item or a heading they do not."""
    text = "Title\nover two lines\n=====\n\n---\n- item\n---\n## Atx\n---\nSub\n---\n"
    headings = markdown_headings(text)
    assert [(h.level, h.title) for h in headings] == [(1, "Title over two lines"), (2, "Atx"), (2, "Sub")]
    assert headings[0].start == 0
    assert text[headings[2].start :].startswith("Sub")


def test_line_endings_and_an_empty_text() -> None:
    """CRLF and CR end lines like LF; nothing gives nothing."""
    assert _found("# A\r\n## B\rC\r\n===\r\n") == [(1, "A"), (2, "B"), (1, "C")]
    assert _found("") == []
    assert _found("# Last line without a newline") == [(1, "Last line without a newline")]


def test_hostile_shapes_are_linear() -> None:
    """Inputs that made markdown-it-py take minutes (unclosed brackets, emphasis runs) are one pass."""
    assert _found("[" * 200_000 + "\n# After") == [(1, "After")]
    assert _found("*a" * 100_000) == []
    assert len(markdown_headings("# h\n" * 50_000)) == 50_000

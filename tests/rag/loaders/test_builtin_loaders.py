"""The core's loaders on real bytes: text in any common encoding, Markdown, HTML, JSON, CSV/TSV."""

from __future__ import annotations

import codecs
import sys

import pytest

from runiq.rag._loaders import (
    CsvLoader,
    DocumentLoadError,
    HtmlLoader,
    JsonLoader,
    LoadFailureCode,
    LoadOptions,
    MarkdownLoader,
    PlainTextLoader,
    TsvLoader,
    decode_text,
)

OPTIONS = LoadOptions()
WESTERN = "Naïve café – “quoted” prices in € for the Straße; São Paulo façade."


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (WESTERN.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + WESTERN.encode("utf-8"), "utf-8"),
        (WESTERN.encode("utf-16"), "utf-16"),  # with its BOM, little or big endian
        (codecs.BOM_UTF16_BE + WESTERN.encode("utf-16-be"), "utf-16"),
        (WESTERN.encode("utf-32"), "utf-32"),
        (WESTERN.encode("cp1252"), "cp1252"),
    ],
)
def test_text_is_decoded_in_its_encoding(data: bytes, encoding: str) -> None:
    """UTF-8 (with or without BOM), UTF-16/32 with BOM and Windows-1252 all give the same text."""
    document = PlainTextLoader().load(data, options=OPTIONS)
    assert document.text == WESTERN
    assert document.metadata["encoding"] == encoding


@pytest.mark.parametrize(
    "text",
    [
        "Größe der Straße in São Paulo: naïve façade, crème brûlée.",
        "Überblick\n=========\n",  # short text the detector alone reads as Korean
        "café",
    ],
)
def test_latin1_and_short_western_text_decode_right(text: str) -> None:
    """Latin-1 bytes (no C1 controls) are Windows-1252 bytes; short text is not taken for Asian scripts."""
    assert decode_text(text.encode("latin-1")) == (text, "cp1252")


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Привет, как дела? Это тестовый текст на русском языке.", "cp1251"),
        ("Zażółć gęślą jaźń, příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250"),
        ("これは日本語のテキストです。テストのための文章。", "shift_jis"),
    ],
)
def test_other_legacy_encodings_are_still_detected(text: str, encoding: str) -> None:
    """Preferring Windows-1252 does not turn Cyrillic, Central European or Japanese text into mojibake."""
    assert decode_text(text.encode(encoding))[0] == text


def test_utf16_without_bom_is_not_taken_for_utf8() -> None:
    """Its NUL bytes are valid UTF-8, but text has no NULs, so detection finds UTF-16."""
    text = "Hello world, this is a plain sentence written in UTF-16 without a byte order mark."
    assert decode_text(text.encode("utf-16-le")) == (text, "utf-16-le")


@pytest.mark.parametrize("data", [bytes(range(256)) * 8, b"\x00" * 64, b"\x01\x02\x03abc" * 10])
def test_binary_data_is_undecodable(data: bytes) -> None:
    with pytest.raises(DocumentLoadError) as caught:
        PlainTextLoader().load(data, options=OPTIONS)
    assert caught.value.code is LoadFailureCode.UNDECODABLE


def test_plain_text_is_kept_as_decoded() -> None:
    """No newline or whitespace rewriting: content hashes of existing UTF-8 files stay what they were."""
    data = b"line one\r\nline two\n\n\tindented\fpage two"
    document = PlainTextLoader().load(data, options=OPTIONS)
    assert document.text == data.decode()
    assert (document.title, document.content_type, document.pages) == (None, "text/plain", ())


def test_markdown_keeps_its_text_and_finds_title_and_headings() -> None:
    """CommonMark headings (not '#' lines in code blocks); the first level-1 heading is the title."""
    text = "Intro line\n\n# Leave policy\n\n```\n# not a heading\n```\n\n## Scope\r\nBody\n### Details ###\n"
    document = MarkdownLoader().load(text.encode("utf-16"), options=OPTIONS)
    assert document.text == text
    assert document.content_type == "text/markdown"
    assert document.title == "Leave policy"
    assert [(h.level, h.title) for h in document.headings] == [(1, "Leave policy"), (2, "Scope"), (3, "Details")]
    for heading in document.headings:
        assert document.text[heading.start :].startswith("#" * heading.level + " " + heading.title)


PAGE = """<!DOCTYPE html>
<html lang="de"><head>
<meta charset="windows-1252"><meta name="author" content="Jane Doe">
<title>  Travel   policy </title>
<style>.x { color: red }</style><script>var tracking = "SCRIPT-TEXT";</script>
</head><body>
<header><nav><a href="/">Home</a> <a href="/about">NAV-TEXT</a></nav><div>SITE-BANNER</div></header>
<div role="navigation">ROLE-NAV</div>
<main>
  <article>
    <header><h1>Travel expenses</h1><p class="byline">Updated in May</p></header>
    <p>Keep every <b>receipt</b> for travel&nbsp;expenses – even taxis.</p>
    <h2>Per diem</h2>
    <ul><li>Meals: €40</li><li>Hotel: actual cost</li></ul>
    <table><tr><th>City</th><th>Rate</th></tr><tr><td>Zürich</td><td>60</td></tr></table>
    <p hidden>HIDDEN-TEXT</p><div aria-hidden="true">ARIA-HIDDEN</div>
    <p>Line one<br>Line two</p>
    <!-- COMMENT-TEXT -->
    <form><input value="FORM-TEXT"><button>BUTTON-TEXT</button></form>
  </article>
  <aside>ASIDE-TEXT</aside>
</main>
<footer>FOOTER-TEXT &copy; 2024</footer>
<noscript>NOSCRIPT-TEXT</noscript>
</body></html>
"""


def test_html_main_text_as_markdown_without_boilerplate() -> None:
    """<title> is the title, headings become Markdown, and scripts, navigation, chrome and hidden text are gone."""
    document = HtmlLoader().load(PAGE.encode("cp1252"), options=OPTIONS)
    assert document.title == "Travel policy"
    assert document.content_type == "text/markdown"
    assert document.text == (
        "# Travel expenses\n\nUpdated in May\n\n"
        "Keep every receipt for travel expenses – even taxis.\n\n"
        "## Per diem\n\nMeals: €40\n\nHotel: actual cost\n\nCity | Rate\n\nZürich | 60\n\nLine one\nLine two"
    )
    for boilerplate in ("SCRIPT", "NAV", "SITE-BANNER", "ROLE-NAV", "HIDDEN", "COMMENT", "FORM", "BUTTON"):
        assert boilerplate not in document.text
    for boilerplate in ("ASIDE", "FOOTER", "NOSCRIPT", "color", "Travel policy"):
        assert boilerplate not in document.text
    assert [(h.level, h.title) for h in document.headings] == [(1, "Travel expenses"), (2, "Per diem")]
    assert dict(document.metadata) == {"encoding": "cp1252", "author": "Jane Doe", "language": "de"}


def test_html_without_main_uses_the_body_and_detects_an_undeclared_encoding() -> None:
    page = "<title>Notes</title><nav>menu</nav><p>Crème brûlée für alle.</p><footer>foot</footer>"
    document = HtmlLoader().load(page.encode("cp1252"), options=OPTIONS)
    assert (document.title, document.text) == ("Notes", "Crème brûlée für alle.")


def test_html_nested_far_deeper_than_the_stack_is_read() -> None:
    """The walk is iterative: a hostile nesting depth (five times the recursion limit) is text, not a
    RecursionError."""
    depth = 5 * sys.getrecursionlimit()
    page = "<html><body>" + "<span>" * depth + "deep text" + "</span>" * depth + "</body></html>"
    assert HtmlLoader().load(page.encode(), options=OPTIONS).text == "deep text"


def test_html_does_not_expand_declared_entities() -> None:
    """A billion-laughs DTD in HTML is inert: html.parser never expands declared entities."""
    bomb = '<!DOCTYPE html [<!ENTITY a "AAAAAAAAAA"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><p>&b;&b;</p>'
    document = HtmlLoader().load(bomb.encode(), options=OPTIONS)
    assert "AAAAAAAAAA" not in document.text
    assert len(document.text) < 100


def test_json_text_field_is_the_text_and_other_fields_only_when_configured() -> None:
    data = b'{"text": "Remote work is allowed.", "title": "Remote", "lang": "en", "n": 3, "tags": ["a"]}'
    plain = JsonLoader().load(data, options=OPTIONS)
    assert (plain.text, plain.title, dict(plain.metadata)) == ("Remote work is allowed.", None, {})
    configured = JsonLoader().load(
        data, options=LoadOptions(json_title_field="title", json_metadata_fields=("lang", "n", "tags", "missing"))
    )
    assert (configured.title, dict(configured.metadata)) == ("Remote", {"lang": "en", "n": 3})
    other = JsonLoader().load(b'{"body": "x"}', options=LoadOptions(json_text_field="body"))
    assert other.text == "x"
    assert JsonLoader().load('{"text": "ünïcode"}'.encode("utf-16"), options=OPTIONS).text == "ünïcode"


@pytest.mark.parametrize(
    "data",
    [
        b'{"text": 5}',
        b'{"body": "no text field"}',
        b'["text"]',
        b'{"text": "unterminated',
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the interpreter's stack
        b'{"text": "x", "n": ' + b"9" * 5000 + b"}",  # beyond Python's integer digit limit
    ],
)
def test_json_without_a_text_string_is_malformed(data: bytes) -> None:
    with pytest.raises(DocumentLoadError) as caught:
        JsonLoader().load(data, options=OPTIONS)
    assert caught.value.code is LoadFailureCode.MALFORMED
    assert caught.value.__context__ is None


def test_csv_rows_become_readable_lines_naming_their_columns() -> None:
    """One line per row, 'Column: value' pairs; empty cells left out; the delimiter is detected."""
    data = 'Name;Department;Salary\nAlice;Sales;5000\n"Bob; Jr.";;4200\n;;\nCarol;"R&D\nLab";\n'.encode("cp1252")
    document = CsvLoader().load(data, options=OPTIONS)
    assert document.text == (
        "Name: Alice; Department: Sales; Salary: 5000\nName: Bob; Jr.; Salary: 4200\nName: Carol; Department: R&D Lab"
    )
    assert dict(document.metadata) == {"encoding": "utf-8", "row_count": 3}


def test_tsv_and_header_only_files() -> None:
    tsv = TsvLoader().load("City\tRate\nZürich\t60\n".encode("utf-16"), options=OPTIONS)
    assert tsv.text == "City: Zürich; Rate: 60"
    assert CsvLoader().load(b"only,a,header\n", options=OPTIONS).text == "only; a; header"


def test_csv_with_a_field_over_the_parser_limit_is_malformed() -> None:
    with pytest.raises(DocumentLoadError) as caught:
        CsvLoader().load(b'a,b\n"' + b"x" * 200_000 + b'",1\n', options=OPTIONS)
    assert caught.value.code is LoadFailureCode.MALFORMED

"""LoadedDocument, the Markdown builder, guarded() and the registry: the shapes every loader shares."""

from __future__ import annotations

import pickle

import pytest

from runiq.rag._errors import RagConfigurationError, RagValidationError
from runiq.rag._loaders import (
    PAGE_BREAK,
    DocumentLoadError,
    Heading,
    LoadedDocument,
    LoaderRegistry,
    LoadFailureCode,
    LoadOptions,
    MarkdownBuilder,
    PageSpan,
    PlainTextLoader,
    guarded,
    parser_failures,
    register_builtin_loaders,
)
from runiq.rag.testing import CANARY


def test_from_pages_joins_with_form_feeds_and_records_each_page() -> None:
    """Pages are joined by one form feed; each span is its page's text, numbered from 1."""
    document = LoadedDocument.from_pages(["first page", "", "third"], title="T")
    assert document.text == "first page\f\fthird"
    assert [document.text[p.start : p.end] for p in document.pages] == ["first page", "", "third"]
    assert [p.number for p in document.pages] == [1, 2, 3]
    for page in document.pages:  # the chunkers' rule: page = form feeds before the offset + 1
        assert document.text.count(PAGE_BREAK, 0, page.start) + 1 == page.number


def test_a_form_feed_inside_a_page_does_not_start_a_page() -> None:
    """A page's own form feed becomes a newline, so counting form feeds still gives the page."""
    document = LoadedDocument.from_pages(["a\fb", "c"])
    assert document.text == "a\nb\fc"
    assert [(p.start, p.end) for p in document.pages] == [(0, 3), (4, 5)]


def test_parser_failures_put_the_formats_own_errors_first() -> None:
    """A format's mapping wins over the generic corrupt-input mapping; MemoryError is too_large."""

    class FormatError(ValueError):
        pass

    failures = parser_failures({FormatError: LoadFailureCode.ENCRYPTED})
    for error, code in [
        (FormatError(), LoadFailureCode.ENCRYPTED),
        (ValueError(), LoadFailureCode.MALFORMED),
        (RecursionError(), LoadFailureCode.MALFORMED),
        (MemoryError(), LoadFailureCode.TOO_LARGE),
    ]:

        def fail(error: BaseException = error) -> None:
            raise error

        with pytest.raises(DocumentLoadError) as caught:
            guarded(fail, failures)
        assert caught.value.code is code


def test_text_is_made_storable_without_moving_offsets() -> None:
    """NUL and lone surrogates become U+FFFD, one for one, in text, title, headings and metadata."""
    document = LoadedDocument(
        text="a\x00b\ud800c",
        title="t\x00",
        headings=(Heading(1, "h\udfff", 0),),
        metadata={"author": "x\x00"},
        pages=(PageSpan(1, 0, 5),),
    )
    assert document.text == "a\ufffdb\ufffdc"
    assert document.title == "t\ufffd"
    assert document.headings[0].title == "h\ufffd"
    assert document.metadata["author"] == "x\ufffd"
    document.text.encode("utf-8")


@pytest.mark.parametrize(
    ("pages", "headings"),
    [
        ((PageSpan(2, 0, 1),), ()),  # not numbered from 1
        ((PageSpan(1, 0, 3), PageSpan(2, 2, 4)), ()),  # overlapping
        ((PageSpan(1, 0, 99),), ()),  # past the end
        ((), (Heading(0, "x", 0),)),  # level 0
        ((), (Heading(1, "x", 99),)),  # past the end
    ],
)
def test_spans_outside_the_text_are_refused(pages: tuple[PageSpan, ...], headings: tuple[Heading, ...]) -> None:
    with pytest.raises(RagValidationError):
        LoadedDocument(text="abcd", pages=pages, headings=headings)


def test_to_document_prefers_the_loaders_title_and_the_sources_metadata() -> None:
    """The format's title beats the file-name fallback; the source's metadata wins on equal keys."""
    loaded = LoadedDocument.from_pages(["p1", "p2"], title="Annual report", metadata={"author": "A", "x": 1})
    document = loaded.to_document("reports/a.pdf", title="a", metadata={"x": 2, "extension": "pdf", "title": "a"})
    assert document.title == "Annual report"
    assert document.content == "p1\fp2"
    assert dict(document.metadata) == {
        "author": "A",
        "x": 2,
        "extension": "pdf",
        "title": "Annual report",
        "page_count": 2,
    }
    assert LoadedDocument(text="x").to_document("b.txt", title="b").title == "b"


def test_markdown_builder_renders_headings_pages_and_escapes_text_that_looks_like_a_heading() -> None:
    """Headings at line starts, a form feed line between pages, '#' in body text escaped."""
    builder = MarkdownBuilder()
    builder.start_page()
    builder.heading("Intro\nslide", 1)
    builder.paragraph("# not a heading\n\n  text \f more")
    builder.start_page()
    builder.start_page()
    builder.heading("Last", 2)
    document = builder.build(title="Deck", metadata={"slide_count": 3})
    assert document.text == "# Intro slide\n\n\\# not a heading\n  text   more\n\f\n\n\f\n## Last"
    assert document.content_type == "text/markdown"
    assert [(h.level, h.title, document.text[h.start :].split("\n")[0]) for h in document.headings] == [
        (1, "Intro slide", "# Intro slide"),
        (2, "Last", "## Last"),
    ]
    assert [document.text[p.start : p.end] for p in document.pages] == [
        "# Intro slide\n\n\\# not a heading\n  text   more",
        "",
        "## Last",
    ]
    for page in document.pages:
        assert document.text.count(PAGE_BREAK, 0, page.start) + 1 == page.number


def test_markdown_builder_without_pages_has_no_page_spans() -> None:
    builder = MarkdownBuilder()
    builder.paragraph("one")
    builder.paragraph("   ")
    builder.paragraph("two")
    document = builder.build()
    assert (document.text, document.pages) == ("one\n\ntwo", ())


def test_guarded_translates_parser_errors_without_keeping_them() -> None:
    """A parser's exception (quoting the document) becomes a coded error with no cause and no context."""

    def parse() -> str:
        raise ValueError(f"bad token near {CANARY}")

    with pytest.raises(DocumentLoadError) as caught:
        guarded(parse, {KeyError: LoadFailureCode.FAILED, ValueError: LoadFailureCode.MALFORMED})
    error = caught.value
    assert error.code is LoadFailureCode.MALFORMED
    assert error.__cause__ is None
    assert error.__context__ is None
    assert CANARY not in f"{error} {error!r} {error.args}"
    with pytest.raises(TypeError):  # an unlisted exception is not a document failure
        guarded(lambda: len(5), {ValueError: LoadFailureCode.MALFORMED})  # type: ignore[arg-type]
    assert guarded(lambda: 7, {}) == 7


def test_every_failure_code_has_a_fixed_message() -> None:
    for code in LoadFailureCode:
        error = DocumentLoadError(code)
        assert error.code is code
        assert error.message.endswith(".")


def _registry() -> LoaderRegistry:
    registry = LoaderRegistry()
    register_builtin_loaders(registry)
    return registry


@pytest.mark.parametrize(
    ("name", "loader"),
    [
        ("README.md", "markdown"),
        ("Notes.MARKDOWN", "markdown"),
        ("a/b/page.HTM", "html"),
        ("data.Json", "json"),
        ("table.tsv", "tsv"),
        ("report.final.csv", "csv"),
        ("plain.TXT", "text"),
    ],
)
def test_registry_resolves_file_names_case_insensitively(name: str, loader: str) -> None:
    resolved = _registry().for_path(name)
    assert resolved is not None
    assert resolved.name == loader


def test_registry_prefers_the_longest_claimed_suffix_and_reports_unsupported_formats() -> None:
    registry = _registry()
    registry.add(PlainTextLoader("gzipped-notes", frozenset({".txt.gz"}), frozenset()))
    assert registry.require("a.TXT.gz").name == "gzipped-notes"
    assert registry.require("a.txt").name == "text"
    assert not registry.reads("archive.gz")
    with pytest.raises(DocumentLoadError) as caught:
        registry.require("picture.png")
    assert caught.value.code is LoadFailureCode.UNSUPPORTED_FORMAT
    assert registry.for_media_type("Text/HTML; charset=utf-8") is registry.get("html").loader


class _Unpicklable(PlainTextLoader):
    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("no")


@pytest.mark.parametrize(
    ("loader", "fragment"),
    [
        (PlainTextLoader(" text"), "name"),
        (PlainTextLoader("up", frozenset({"TXT"})), "extensions"),
        (PlainTextLoader("up", frozenset({".TXT"})), "extensions"),
        (PlainTextLoader("up", frozenset({".txt"}), frozenset({"text"})), "media_types"),
        (_Unpicklable("up", frozenset({".up"})), "picklable"),
        (object(), "name"),
    ],
)
def test_registry_refuses_loaders_that_cannot_run(loader: object, fragment: str) -> None:
    with pytest.raises(RagConfigurationError) as caught:
        LoaderRegistry().add(loader)  # type: ignore[arg-type]
    assert fragment in str(caught.value)


def test_registry_refuses_a_loader_defined_in_main() -> None:
    """A worker process cannot import __main__'s classes by name, so registration says so at once."""
    main_class = type("MainLoader", (PlainTextLoader,), {"__module__": "__main__"})
    with pytest.raises(RagConfigurationError) as caught:
        LoaderRegistry().add(main_class("main-loader", frozenset({".x"})))
    assert "__main__" in str(caught.value)


def test_registry_refuses_a_second_loader_of_the_same_name() -> None:
    registry = LoaderRegistry()
    registry.set_current_plugin("first")
    registry.add(PlainTextLoader("notes", frozenset({".a"})))
    registry.set_current_plugin("second")
    with pytest.raises(RagConfigurationError) as caught:
        registry.add(PlainTextLoader("notes", frozenset({".b"})), replace=True)
    assert ("'first'" in str(caught.value), "'second'" in str(caught.value)) == (True, True)


def test_loaders_and_options_pickle_for_the_worker() -> None:
    """Everything a request carries survives pickling unchanged."""
    options = LoadOptions(json_text_field="body", json_metadata_fields=("lang",))
    assert pickle.loads(pickle.dumps(options)) == options
    for spec in (_registry().get(name) for name in _registry().names()):
        assert pickle.loads(pickle.dumps(spec.loader)).name == spec.loader.name


@pytest.mark.parametrize(
    "kwargs",
    [{"max_unpacked_bytes": 0}, {"json_text_field": " "}, {"json_metadata_fields": ("",)}],
)
def test_load_options_are_validated(kwargs: dict[str, object]) -> None:
    with pytest.raises(RagConfigurationError):
        LoadOptions(**kwargs)  # type: ignore[arg-type]

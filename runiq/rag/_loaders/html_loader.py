"""HTML: the main text as light Markdown, ``<title>`` as the title, boilerplate left out.

Parsed with Beautiful Soup (MIT) on the standard library's ``html.parser``: tolerant of broken markup,
no compiled dependency, and it never fetches or expands anything (no DTD entities, no external
resources). The main text is ``<main>``, else the page's single ``<article>``, else ``<body>``; scripts,
styles, navigation, forms, asides, hidden elements and page-level headers and footers are dropped.
Headings ``<h1>``-``<h6>`` become Markdown headings, so chunks get a ``section``. The walk over the
tree is iterative: a page nested a hundred thousand levels deep cannot exhaust the stack.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from runiq.rag._documents import MetadataValue
from runiq.rag._loaders.base import LoadedDocument, LoadOptions, guarded, parser_failures
from runiq.rag._loaders.builder import MarkdownBuilder, one_line
from runiq.rag._loaders.deferred import import_when_loading
from runiq.rag._loaders.encoding import decode_text

if TYPE_CHECKING:
    from bs4 import BeautifulSoup
    from bs4.element import Tag

__all__ = ["HtmlLoader"]

_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "nav", "aside", "form", "button", "select"}
    | {"dialog", "svg", "math", "canvas", "iframe", "object", "embed", "audio", "video", "map", "menu"}
)
_PAGE_CHROME = frozenset({"header", "footer"})  # boilerplate at page level, content inside an article
_SKIPPED_ROLES = frozenset({"navigation", "banner", "contentinfo", "search", "complementary", "dialog"})
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "li", "ul", "ol", "dl", "dt", "dd"}
    | {"blockquote", "table", "thead", "tbody", "tfoot", "tr", "caption", "figure", "figcaption"}
    | {"address", "details", "summary", "hr", "body", "html", "center", "fieldset", "legend"}
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CELLS = frozenset({"td", "th"})
_EXIT = object()  # marks the end of a block on the walk's stack
_FAILURES = parser_failures()
import_when_loading("bs4", "bs4.dammit", "bs4.element")


class HtmlLoader:
    name = "html"
    extensions = frozenset({".html", ".htm", ".xhtml"})
    media_types = frozenset({"text/html", "application/xhtml+xml"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = _decode(data)
        return guarded(lambda: _load(text, encoding), _FAILURES)


def _load(text: str, encoding: str) -> LoadedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    builder = MarkdownBuilder()
    _Walk(builder).run(_main(soup))
    return builder.build(title=_title(soup), metadata=_metadata(soup, encoding))


def _decode(data: bytes) -> tuple[str, str]:
    """A byte-order mark, else the document's own ``<meta charset>``, else detection."""
    from bs4.dammit import EncodingDetector

    has_bom = data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    declared = None if has_bom else EncodingDetector.find_declared_encoding(data, is_html=True)
    if declared:
        try:
            return data.decode(declared), codecs.lookup(declared).name
        except (UnicodeDecodeError, LookupError):
            pass
    return decode_text(data)


def _main(soup: BeautifulSoup) -> Tag:
    from bs4.element import Tag

    main = soup.find("main")
    if isinstance(main, Tag):
        return main
    articles = soup.find_all("article", limit=2)
    if len(articles) == 1 and isinstance(articles[0], Tag):
        return articles[0]
    return soup.body if soup.body is not None else soup


def _title(soup: BeautifulSoup) -> str | None:
    return (one_line(soup.title.get_text()) or None) if soup.title is not None else None


def _metadata(soup: BeautifulSoup, encoding: str) -> dict[str, MetadataValue]:
    from bs4.element import Tag

    metadata: dict[str, MetadataValue] = {"encoding": encoding}
    author = soup.find("meta", attrs={"name": "author"})
    if isinstance(author, Tag) and isinstance(content := author.get("content"), str) and one_line(content):
        metadata["author"] = one_line(content)
    if isinstance(soup.html, Tag) and isinstance(language := soup.html.get("lang"), str) and language.strip():
        metadata["language"] = language.strip()
    return metadata


def _skipped(tag: Tag, inside_content: bool) -> bool:
    if tag.name in _SKIPPED or (tag.name in _PAGE_CHROME and not inside_content):
        return True
    if tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).lower() == "true":
        return True
    return str(tag.get("role", "")).lower() in _SKIPPED_ROLES


class _Walk:
    """Depth-first over the tree with an explicit stack, collecting inline text into paragraphs."""

    def __init__(self, builder: MarkdownBuilder) -> None:
        self._builder = builder
        self._inline: list[str] = []

    def run(self, root: Tag) -> None:
        from bs4.element import NavigableString, Tag

        stack: list[tuple[object, bool]] = [(root, root.name in {"main", "article"})]
        while stack:
            node, inside_content = stack.pop()
            if node is _EXIT:
                self._flush()
            elif type(node) is NavigableString:  # not comments, doctypes or CDATA
                self._inline.append(str(node))
            elif isinstance(node, Tag) and not _skipped(node, inside_content):
                inside_content = inside_content or node.name in {"main", "article"}
                stack.extend((child, inside_content) for child in self._visit(node))

    def _visit(self, tag: Tag) -> list[object]:
        """What to push for ``tag``, in reverse order (the stack pops the last item first)."""
        if tag.name in _HEADINGS:
            self._flush()
            self._builder.heading(tag.get_text(" "), _HEADINGS[tag.name])
            return []
        if tag.name == "pre":
            self._flush()
            self._builder.paragraph(tag.get_text())
            return []
        if tag.name == "br":
            self._inline.append("\n")
        elif tag.name in _CELLS and "".join(self._inline).strip():
            self._inline.append(" | ")
        children: list[object] = list(tag.contents)
        children.reverse()
        if tag.name in _BLOCKS:
            self._flush()
            return [_EXIT, *children]
        return children

    def _flush(self) -> None:
        lines = (one_line(line) for line in "".join(self._inline).split("\n"))
        self._builder.paragraph("\n".join(line for line in lines if line))
        self._inline.clear()

"""Relative links between the pages under docs/ point at files and headings that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))

_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*$", re.MULTILINE)


def _prose(path: Path) -> str:
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def _anchors(path: Path) -> set[str]:
    """GitHub-style heading slugs: lower case, punctuation dropped, spaces to hyphens."""
    slugs = set()
    for heading in _HEADING.findall(_prose(path)):
        text = heading.replace("`", "").strip().lower()
        slugs.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return slugs


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    """Every relative link names an existing page (and, with a #fragment, an existing heading)."""
    broken = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        missing_anchor = (
            destination.is_file()
            and bool(fragment)
            and destination.suffix == ".md"
            and fragment not in _anchors(destination)
        )
        if not destination.is_file() or missing_anchor:
            broken.append(target)
    assert broken == []

"""Each face's reference page lists exactly the names in its ``__all__``, each once:
docs/reference/api.md for runiq.rag, docs/reference/providers.md for runiq.rag.providers."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

import runiq.rag
import runiq.rag.providers

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"
PAGES = [(runiq.rag, REFERENCE / "api.md"), (runiq.rag.providers, REFERENCE / "providers.md")]
# A table row whose first cell is one backticked name: | `RagQuery` | ... |
_ROW = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|", re.MULTILINE)


def _listed(page: Path) -> Counter[str]:
    return Counter(_ROW.findall(page.read_text(encoding="utf-8")))


@pytest.mark.parametrize(("face", "page"), PAGES, ids=[page.name for _, page in PAGES])
def test_every_public_name_is_listed(face: ModuleType, page: Path) -> None:
    """Each name in the face's __all__ has a row on its reference page."""
    assert sorted(set(face.__all__) - set(_listed(page))) == []


@pytest.mark.parametrize(("face", "page"), PAGES, ids=[page.name for _, page in PAGES])
def test_only_public_names_are_listed_once(face: ModuleType, page: Path) -> None:
    """No row documents a name the face does not export, and none is listed twice."""
    listed = _listed(page)
    assert sorted(set(listed) - set(face.__all__)) == []
    assert sorted(name for name, count in listed.items() if count > 1) == []

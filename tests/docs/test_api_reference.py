"""docs/reference/api.md lists exactly the names in runiq.rag.__all__, each once."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import runiq.rag

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "api.md"
# A table row whose first cell is one backticked name: | `RagQuery` | ... |
_ROW = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|", re.MULTILINE)


def _listed() -> Counter[str]:
    return Counter(_ROW.findall(API_DOC.read_text(encoding="utf-8")))


def test_every_public_name_is_listed() -> None:
    """Each name in runiq.rag.__all__ has a row in the API reference."""
    assert sorted(set(runiq.rag.__all__) - set(_listed())) == []


def test_only_public_names_are_listed_once() -> None:
    """No row documents a name runiq.rag does not export, and none is listed twice."""
    listed = _listed()
    assert sorted(set(listed) - set(runiq.rag.__all__)) == []
    assert sorted(name for name, count in listed.items() if count > 1) == []

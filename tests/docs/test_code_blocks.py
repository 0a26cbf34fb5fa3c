"""Every ```python block in README.md and docs/ runs, on its own, in a fresh interpreter.

Blocks are self-contained by convention (they create their own files and hosts), so each one runs
with ``sys.executable -c`` in an empty temporary directory. Illustrative snippets use ```text,
```toml or ```bash fences instead, which are never executed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# A fence opens at the start of a line; the block ends at the next fence line.
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
# Languages a block may declare. ``python`` runs; the others are illustrative by definition.
_ALLOWED = {"python", "text", "toml", "bash", "console", "json"}
TIMEOUT_SECONDS = 60


def _fences(path: Path) -> list[tuple[str, int, str]]:
    """(language, first line number, code) for every fenced block in ``path``."""
    text = path.read_text(encoding="utf-8")
    return [
        (match.group(1).strip(), text.count("\n", 0, match.start()) + 2, match.group(2))
        for match in _FENCE.finditer(text)
    ]


def _python_blocks() -> list[object]:
    params = []
    for path in DOC_FILES:
        relative = path.relative_to(ROOT).as_posix()
        blocks = [(line, code) for language, line, code in _fences(path) if language == "python"]
        for index, (line, code) in enumerate(blocks):
            params.append(pytest.param(relative, index, line, code, id=f"{relative}[{index}]"))
    return params


def _environment() -> dict[str, str]:
    # The blocks document runiq itself: the machine's RUNIQ_* settings must not change them.
    return {name: value for name, value in os.environ.items() if not name.upper().startswith("RUNIQ_")}


@pytest.mark.parametrize(("path", "index", "line", "code"), _python_blocks())
def test_python_block_runs(path: str, index: int, line: int, code: str, tmp_path: Path) -> None:
    """The block exits 0 in a fresh interpreter whose working directory is an empty temp dir."""
    try:
        completed = subprocess.run(  # our own interpreter running our own docs
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{path} block {index} (line {line}) did not finish within {TIMEOUT_SECONDS}s:\n{exc.stderr}")
    if completed.returncode != 0:
        pytest.fail(
            f"{path} block {index} (line {line}) exited with {completed.returncode}\n"
            f"--- stderr ---\n{completed.stderr}\n--- stdout (tail) ---\n{completed.stdout[-2000:]}"
        )


def test_docs_have_python_blocks() -> None:
    """The collector finds blocks (a broken fence pattern would silently test nothing)."""
    assert len(_python_blocks()) >= 10


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fences_declare_a_known_language(path: Path) -> None:
    """Every fence names a language, so Python cannot hide from the runner under ``py`` or no tag."""
    unknown = [(line, language) for language, line, _ in _fences(path) if language not in _ALLOWED]
    assert unknown == []

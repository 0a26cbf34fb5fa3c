"""CLI tests run on a small in-memory index in a temporary directory, never the machine's RUNIQ_* settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from runiq.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "runiq" / "cli" / "schemas"

CONFIG = """\
[logging]
level = "info"

[rag.indexes.notes]
default_mode = "lexical"

[[rag.indexes.notes.sources]]
path = "docs"
pattern = "*.md"
recursive = true

[rag.indexes.notes.embedding]
provider = "hashing"

[rag.indexes.notes.vector_store]
provider = "in-memory"
"""


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(cli_main.console, "width", 200)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Two good documents and one that is not UTF-8 (it fails with ``undecodable``)."""
    docs = tmp_path / "docs"
    (docs / "team").mkdir(parents=True)
    (docs / "remote.md").write_text("Remote work policy POL-HR-014: three days a week.", encoding="utf-8")
    (docs / "team" / "build.md").write_text("Build error CS1503: argument type does not convert.", encoding="utf-8")
    (docs / "broken.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    path = tmp_path / "runiq.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def _validate(document: Any, command: str) -> None:
    """``document`` matches the published JSON Schema of ``runiq COMMAND --json``."""
    schema = json.loads((SCHEMAS / f"{command}.json").read_text(encoding="utf-8"))
    errors = [error.message for error in jsonschema_rs.validator_for(schema).iter_errors(document)]
    assert errors == []


def _run_cli(*arguments: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``runiq ARGUMENTS`` in a fresh interpreter (``python -m runiq.cli``, the console script's code)."""
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")} | (env or {})
    return subprocess.run(  # our own interpreter running our own CLI
        [sys.executable, "-m", "runiq.cli", *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def validate() -> Callable[[Any, str], None]:
    return _validate


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return _run_cli

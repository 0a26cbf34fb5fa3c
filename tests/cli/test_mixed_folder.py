"""runiq ingest over a folder of mixed files with the default pattern: files no loader reads are
counted as skipped, each file a loader cannot read is named with its code."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from runiq.cli.main import app

CONFIG = """\
[rag.indexes.mixed]
default_mode = "lexical"

[[rag.indexes.mixed.sources]]
path = "docs"
recursive = true

[rag.indexes.mixed.vector_store]
provider = "in-memory"
"""


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "data").mkdir(parents=True)
    (docs / "policy.md").write_text("# Policy\n\nRemote work three days a week.\n")
    (docs / "data" / "faq.json").write_text(json.dumps({"text": "Who approves? The lead."}))
    (docs / "data" / "export.json").write_text(json.dumps({"rows": []}))  # no text field: malformed
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with zipfile.ZipFile(docs / "data" / "bundle.zip", "w") as archive:
        archive.writestr("a.txt", "zipped")
    (docs / "run.exe").write_bytes(b"MZ\x90\x00" + b"\x00" * 60)
    config = tmp_path / "runiq.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return config


def test_ingest_counts_skipped_files_and_names_the_failed_one(mixed: Path) -> None:
    """The image, archive and executable are skipped, not failed; the JSON without text fails by name."""
    result = CliRunner().invoke(app, ["ingest", "-c", str(mixed)])
    assert result.exit_code == 1, result.output
    assert "partially_completed" in result.stdout
    assert "added 2" in result.stdout and "failed 1" in result.stdout
    assert "files skipped (no loader) 3" in result.stdout
    assert "failed: data/export.json  [malformed]" in result.stdout


def test_ingest_json_has_the_skipped_count_and_the_failures(mixed: Path, validate: Callable[[Any, str], None]) -> None:
    result = CliRunner().invoke(app, ["ingest", "--json", "-c", str(mixed)])
    document = json.loads(result.stdout)
    validate(document, "ingest")
    (operation,) = document["operations"]
    assert operation["progress"]["skipped_files"] == 3
    assert operation["progress"]["failed_documents"] == 1
    assert [(f["document_id"], f["code"]) for f in operation["failures"]] == [("data/export.json", "malformed")]


def test_a_folder_of_documents_and_unreadable_formats_completes(mixed: Path) -> None:
    """Without the malformed file the run is 'completed' (exit 0): skipped files are no failures."""
    (mixed.parent / "docs" / "data" / "export.json").unlink()
    result = CliRunner().invoke(app, ["ingest", "-c", str(mixed)])
    assert result.exit_code == 0, result.output
    assert "mixed: completed" in result.stdout and "files skipped (no loader) 3" in result.stdout

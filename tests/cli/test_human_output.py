"""The tables and summaries: failed documents are named with their codes, and nothing a document or a
server supplies can restyle or drive the terminal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from runiq.cli.main import app
from runiq.cli.output import IngestOutput
from runiq.cli.render import ingest_report, plain
from runiq.rag import RagIngestionFailure, RagIngestionOperation, RagIngestionProgress, RagIngestionReason
from runiq.rag import RagIngestionState as State

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _rendered(operation: RagIngestionOperation) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(ingest_report(IngestOutput.of([operation])))
    return console.export_text()


def _operation(failures: tuple[RagIngestionFailure, ...], failed: int) -> RagIngestionOperation:
    return RagIngestionOperation(
        operation_id="op",
        index_name="notes",
        reason=RagIngestionReason.MANUAL,
        state=State.PARTIALLY_COMPLETED,
        started_at=NOW,
        completed_at=NOW,
        progress=RagIngestionProgress(
            discovered_documents=failed + 1, processed_documents=failed + 1, added_documents=1, failed_documents=failed
        ),
        last_failure=failures[-1] if failures else None,
        failures=failures,
    )


def test_ingest_lists_each_failed_document_and_its_code(config: Path) -> None:
    """Issue 28: the CLI said only 'failed 1, last failure: undecodable' and named no file."""
    result = CliRunner().invoke(app, ["ingest", "-c", str(config)])
    assert result.exit_code == 1
    assert "partially_completed" in result.stdout and "failed 1" in result.stdout
    assert "failed: broken.md  [undecodable]" in result.stdout


def test_a_truncated_failure_list_says_how_many_are_missing() -> None:
    failures = tuple(
        RagIngestionFailure(code="undecodable", timestamp=NOW, document_id=f"d{i}.md", source_kind="directory")
        for i in range(3)
    )
    text = _rendered(_operation(failures, failed=1500))
    assert text.count("failed: d") == 3
    assert "and 1497 more failed documents (only the first 3 are listed)" in text


def test_document_ids_are_printed_literally_with_control_characters_escaped() -> None:
    """A file name holding Rich markup or an ANSI escape is shown as text, never interpreted."""
    hostile = RagIngestionFailure(code="undecodable", timestamp=NOW, document_id="[bold]x\x1b[2J.md")
    text = _rendered(_operation((hostile,), failed=1))
    assert "failed: [bold]x\\x1b[2J.md  [undecodable]" in text
    assert "\x1b" not in text


def test_plain_escapes_only_what_is_not_printable() -> None:
    assert plain("team/build.md") == "team/build.md"
    assert plain("a\tb\u202ec\x00") == "a\\tb\\u202ec\\x00"


def test_an_invalid_configuration_names_fields_and_chains_nothing(tmp_path: Path) -> None:
    """The settings' validation error holds the values (a DSN with its password): nothing of it is kept."""
    import typer

    from runiq.cli.hosting import load_settings

    secret = "postgresql://u:CANARY-pw@db/x"
    config = tmp_path / "runiq.toml"
    config.write_text(f'[rag.indexes.docs]\nchunking = {{ max_characters = "{secret}" }}\n')
    with pytest.raises(typer.BadParameter) as caught:
        load_settings(config)
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert "CANARY-pw" not in str(caught.value)

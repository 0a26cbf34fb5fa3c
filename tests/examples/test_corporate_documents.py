"""The corporate-documents example runs as documented: code-first app and config-driven CLI."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runiq.cli import main as cli_main
from runiq.cli.main import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "corporate-documents"


def _load_app_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("corporate_app", EXAMPLE / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_code_first_app_finds_the_identifier_documents() -> None:
    """app.py ingests on startup and finds each identifier's document first."""
    found = await _load_app_module().main()
    assert found["POL-HR-014"][0] == "remote-work-policy.md"
    assert found["CS1503"][0] == "engineering/engineering-support-handbook.md"
    assert found["IRagRetriever"][0] == "engineering/engineering-support-handbook.md"
    assert found['"manager approval"'][0] in {"expense-reimbursement-policy.md", "business-travel-policy.md"}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example next to its documents; the embedded PostgreSQL lives under tmp_path."""
    shutil.copytree(EXAMPLE / "documents", tmp_path / "documents")
    shutil.copy(EXAMPLE / "runiq.toml", tmp_path / "runiq.toml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RUNIQ_DISABLED_PLUGINS", '["example"]')
    monkeypatch.setattr(cli_main.console, "width", 200)
    return tmp_path / "runiq.toml"


def test_cli_ingests_into_embedded_postgres_and_queries_from_another_process_state(config: Path) -> None:
    """runiq ingest then runiq query (a new host, durable store) prints the hit with its provenance."""
    runner = CliRunner()
    status = runner.invoke(app, ["status", "-c", str(config)])
    assert status.exit_code == 0, status.output
    assert "corporate-documents" in status.output
    ingest = runner.invoke(app, ["ingest", "corporate-documents", "-c", str(config)])
    assert ingest.exit_code == 0, ingest.output
    assert "completed" in ingest.output and "added 6" in ingest.output
    again = runner.invoke(app, ["ingest", "corporate-documents", "-c", str(config)])
    assert "skipped 6" in again.output
    query = runner.invoke(app, ["query", "corporate-documents", "POL-HR-014", "--mode", "lexical", "-c", str(config)])
    assert query.exit_code == 0, query.output
    assert "remote-work-policy.md#0" in query.output
    hybrid = runner.invoke(
        app,
        ["query", "corporate-documents", "CS1503", "--mode", "hybrid", "-k", "1", "-c", str(config)],
    )
    assert hybrid.exit_code == 0, hybrid.output
    assert "engineering-support-handbook.md#0" in hybrid.output
    assert "cosine-similarity" in hybrid.output


def test_cli_reports_a_missing_config_clearly(tmp_path: Path) -> None:
    """A missing runiq.toml is a usage error, not a traceback."""
    result = CliRunner().invoke(app, ["status", "-c", str(tmp_path / "missing.toml")])
    assert result.exit_code == 2
    assert "not found" in result.output


def test_cli_version_and_help_list_the_command_groups() -> None:
    """runiq --help lists ingest, query, status and serve; --version prints the version."""
    runner = CliRunner()
    help_text = runner.invoke(app, ["--help"]).output
    for command in ("ingest", "query", "status", "serve"):
        assert command in help_text
    assert runner.invoke(app, ["--version"]).output.startswith("runiq ")

"""``--json`` on ingest, status and query: one document on stdout, matching the published JSON Schemas."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from typer.testing import CliRunner

from runiq.cli.main import app
from runiq.cli.output import SCHEMA_DIRECTORY, schemas

Validate = Callable[[Any, str], None]


def test_schema_files_are_generated_from_the_output_models() -> None:
    """The committed schemas are what the models produce (regenerate: python -m runiq.cli.output)."""
    generated = schemas()
    assert sorted(generated) == ["ingest", "query", "status"]
    for name, schema in generated.items():
        committed = json.loads((SCHEMA_DIRECTORY / f"{name}.json").read_text(encoding="utf-8"))
        assert committed == schema, f"runiq/cli/schemas/{name}.json is stale"
        assert jsonschema_rs.meta.is_valid(committed)


def test_ingest_json_names_every_failed_document_with_its_code(config: Path, validate: Validate) -> None:
    """A partially completed run: exit 1, and the document lists the failed file and its code."""
    result = CliRunner().invoke(app, ["ingest", "--json", "-c", str(config)])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    validate(document, "ingest")
    assert document["version"] == 1
    assert document["completed"] is False
    (operation,) = document["operations"]
    assert operation["index_name"] == "notes"
    assert operation["state"] == "partially_completed"
    assert operation["progress"]["failed_documents"] == 1
    assert operation["progress"]["added_documents"] == 2
    assert [(f["document_id"], f["code"]) for f in operation["failures"]] == [("broken.md", "undecodable")]
    assert operation["failures_truncated"] is False


def test_ingest_json_of_a_clean_run_exits_zero(config: Path, validate: Validate) -> None:
    (config.parent / "docs" / "broken.md").unlink()
    result = CliRunner().invoke(app, ["ingest", "notes", "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate(document, "ingest")
    assert document["completed"] is True
    assert document["operations"][0]["failures"] == []


def test_ingest_json_rejects_what_the_schema_forbids(validate: Validate) -> None:
    """The schema is strict: a missing field or an undocumented one fails validation."""
    validate({"version": 1, "completed": True, "operations": []}, "ingest")
    with pytest.raises(AssertionError):
        validate({"version": 1, "completed": True, "operations": [], "extra": 1}, "ingest")
    with pytest.raises(AssertionError):
        validate({"version": 1, "operations": []}, "ingest")


def test_ingest_stdout_is_exactly_one_json_document_with_info_logs_on(
    config: Path, run_cli: Callable[..., Any]
) -> None:
    """A real process with [logging] level = "info": the logs go to stderr, stdout parses as one document."""
    completed = run_cli("ingest", "--json", "-c", str(config), cwd=config.parent)
    assert completed.returncode == 1, completed.stderr
    assert "ingestion.finished" in completed.stderr  # info logs were on
    document = json.loads(completed.stdout)  # raises on anything but exactly one JSON document
    assert document["operations"][0]["failures"][0]["document_id"] == "broken.md"


def test_status_json(config: Path, validate: Validate) -> None:
    result = CliRunner().invoke(app, ["status", "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate(document, "status")
    assert document["indexes"] == [
        {
            "name": "notes",
            "strategy": "manual",
            "schedule": None,
            "sources": ["directory"],
            "embedding": "hashing",
            "vector_store": "in-memory",
            "metric": "cosine",
            "default_mode": "lexical",
            "readiness": "not_initialized",
        }
    ]


def test_status_reports_what_the_host_of_ingest_and_query_would(config: Path) -> None:
    """``status`` reads declarations without building RAG's services: its indexes and readiness are
    those of the full host that ``ingest`` and ``query`` build from the same file (a new manager)."""
    from runiq.cli.hosting import build_host
    from runiq.cli.output import IndexStatusOutput
    from runiq.rag import IndexRegistry, RagIngestionManager

    result = CliRunner().invoke(app, ["status", "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    host = build_host(config)
    try:
        manager = host.services.get(RagIngestionManager)
        expected = [
            IndexStatusOutput.of(definition, manager.status(definition.name).readiness).model_dump(mode="json")
            for definition in host.services.get(IndexRegistry)
        ]
    finally:
        asyncio.run(host.stop())
    assert json.loads(result.stdout)["indexes"] == expected


def test_query_json_carries_score_semantics_and_provenance(config: Path, validate: Validate) -> None:
    result = CliRunner().invoke(app, ["query", "notes", "CS1503", "--mode", "hybrid", "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate(document, "query")
    assert document["index_name"] == "notes"
    assert document["mode"] == "hybrid"
    top = document["hits"][0]
    assert (top["rank"], top["document_id"], top["chunk_id"]) == (1, "team/build.md", "team/build.md#0")
    assert top["metric"] == "cosine-similarity" and top["higher_is_better"] is True
    assert top["provenance"]["lexical"]["rank"] == 1
    assert top["provenance"]["fused_rank"] == 1
    assert "CS1503" in top["content"]


def test_query_filters_reach_the_retriever(config: Path) -> None:
    """--filter KEY=VALUE is a metadata equality filter: a key no chunk has matches nothing."""
    result = CliRunner().invoke(
        app, ["query", "notes", "CS1503", "--filter", "team=build", "--json", "-c", str(config)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["hits"] == []


def test_an_error_prints_nothing_on_stdout(config: Path) -> None:
    """An unknown index is an error on stderr (exit 1); stdout stays empty for a JSON reader."""
    result = CliRunner().invoke(app, ["ingest", "missing", "--json", "-c", str(config)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "missing" in result.stderr

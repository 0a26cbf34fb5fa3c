"""The mixed-documents example end to end: make_documents.py writes the files, runiq ingest reads
them with the example's runiq.toml (installed plugins included), and queries find each format's
marker word: the PDF's on page 2, the DOCX table's, the PPTX slide's, the XLSX cell's, the HTML body's;
the HTML page's boilerplate words are not found."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from runiq.cli import main as cli_main
from runiq.cli.main import app
from runiq.hosting import HostBuilder
from runiq.rag import RagQuery, RagRetrievalHit, RagRetrievalMode, RagRetriever, add_runiq_rag
from runiq.settings import RuniqSettings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mixed-documents"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_documents_index", EXAMPLE / "make_documents.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example's runiq.toml beside freshly generated documents."""
    _script().make_documents(tmp_path / "documents")
    shutil.copy(EXAMPLE / "runiq.toml", tmp_path / "runiq.toml")
    monkeypatch.setenv("RUNIQ_DISABLED_PLUGINS", '["example"]')
    monkeypatch.setattr(cli_main.console, "width", 200)
    return tmp_path / "runiq.toml"


def test_runiq_ingest_reads_every_format_and_skips_the_image(config: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    (operation,) = json.loads(result.stdout)["operations"]
    assert operation["state"] == "completed"
    progress = operation["progress"]
    assert (progress["added_documents"], progress["failed_documents"], progress["skipped_files"]) == (10, 0, 1)


def test_runiq_query_cites_the_pdf_page(config: Path) -> None:
    result = CliRunner().invoke(
        app, ["query", "mixed-documents", "quartermaster", "--mode", "lexical", "--json", "-c", str(config)]
    )
    assert result.exit_code == 0, result.output
    (hit,) = json.loads(result.stdout)["hits"]
    assert (hit["document_id"], hit["page"]) == ("handbook.pdf", 2)
    assert "quartermaster" in hit["content"]
    assert hit["end_offset"] - hit["start_offset"] == len(hit["content"])


async def test_each_format_answers_its_marker_and_boilerplate_is_gone(config: Path) -> None:
    """On startup the host ingests the folder; each marker's only hit is its file, and the PDF hit
    carries page 2 and offsets; no HTML boilerplate word finds anything."""
    script = _script()
    builder = HostBuilder(settings=RuniqSettings.load(config))
    add_runiq_rag(builder)
    async with builder.build() as host:
        retriever = host.services.get(RagRetriever)

        async def hits(text: str) -> list[RagRetrievalHit]:
            query = RagQuery(index_name="mixed-documents", text=text, mode=RagRetrievalMode.LEXICAL)
            return list((await retriever.retrieve(query)).hits)

        for word, file_name in script.MARKERS.items():
            found = await hits(word)
            assert [hit.document_id for hit in found] == [file_name], word
            assert word in found[0].content.lower(), word
        (pdf,) = await hits("quartermaster")
        assert pdf.page == 2
        assert pdf.start_offset is not None and pdf.end_offset is not None
        assert pdf.end_offset - pdf.start_offset == len(pdf.content)
        (slide,) = await hits("airfares")
        assert slide.page == 1 and slide.metadata["section"] == "Why"
        for word in script.BOILERPLATE:
            assert await hits(word) == [], word

"""A host with the plugin ingests PDFs and Office files from a directory on startup, beside files no
loader reads (skipped); a PDF hit cites its page, and a broken PDF fails by name without a stall."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import runiq_documents.plugin
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    StartupIngestionError,
    add_runiq_rag,
)
from runiq_documents.samples import docx_bytes, pdf_bytes

PAGES = ["Handbook introduction and contents.", "Approval rules: the quartermaster signs every voucher."]


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "handbook.pdf").write_bytes(pdf_bytes(PAGES, title="Handbook"))
    (root / "policy.docx").write_bytes(
        docx_bytes(title="Policy", author="HR", sections=[("Leave", ["Annual leave is 25 days."])], table=None)
    )
    (root / "scan.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 32)
    with zipfile.ZipFile(root / "old.zip", "w") as archive:
        archive.writestr("a.txt", "zipped")
    (root / "tool.exe").write_bytes(b"MZ\x90\x00" + b"\x00" * 60)
    return root


def _builder(documents: Path) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_documents.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(documents)
                .use_embedding(HashingEmbedding())
                .use_in_memory_vector_store()
                .configure_ingestion(lambda ingestion: ingestion.on_startup())
            ),
        ),
    )
    return builder


async def test_on_startup_reads_pdf_and_docx_and_skips_the_rest(tmp_path: Path) -> None:
    async with _builder(_folder(tmp_path / "documents")).build() as host:
        operation = host.services.get(RagIngestionManager).status("docs").last_operation
        assert operation is not None
        assert operation.state is RagIngestionState.COMPLETED
        assert (operation.progress.added_documents, operation.progress.skipped_files) == (2, 3)
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text="quartermaster", mode=RagRetrievalMode.LEXICAL)
        )
        (hit,) = [h for h in result.hits if "quartermaster" in h.content]
        assert (hit.document_id, hit.page, hit.metadata["title"]) == ("handbook.pdf", 2, "Handbook")
        assert (hit.start_offset, hit.end_offset) != (None, None)


async def test_a_truncated_pdf_fails_by_name_and_the_startup_run_reports_it(tmp_path: Path) -> None:
    """OnStartup needs a completed run: a broken PDF makes it partially completed, named with its code."""
    documents = _folder(tmp_path / "documents")
    (documents / "broken.pdf").write_bytes(pdf_bytes(PAGES)[:200])
    builder = _builder(documents)
    host = builder.build()
    with pytest.raises(StartupIngestionError):
        await host.start()
    await host.stop()
    operation = host.services.get(RagIngestionManager).status("docs").last_operation
    assert operation is not None
    assert operation.state is RagIngestionState.PARTIALLY_COMPLETED
    assert [(f.document_id, f.code) for f in operation.failures] == [("broken.pdf", "malformed")]

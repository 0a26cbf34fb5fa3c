"""OnStartup over a folder where images, archives and executables sit beside the documents: the host
starts, the run completes, and those files are counted as skipped (issue 26: one PDF stopped it)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagIngestionManager, RagIngestionState, RagQuery, RagRetriever, add_runiq_rag


def _folder(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "policy.md").write_text("# Leave\n\nTwenty-five days of annual leave.\n")
    (root / "sub" / "notes.txt").write_text("Parental leave is sixteen weeks.\n")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 32)
    with zipfile.ZipFile(root / "sub" / "archive.zip", "w") as archive:
        archive.writestr("inside.md", "# Hidden\n")
    (root / "sub" / "installer").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56)
    return root


async def test_on_startup_over_a_mixed_folder_starts_and_completes(tmp_path: Path) -> None:
    """Host.start() returns; the startup run is 'completed' with 2 documents and 3 skipped files."""
    documents = _folder(tmp_path / "documents")
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "handbook",
            lambda index: (
                index.use_directory(documents, recursive=True)
                .use_embedding(HashingEmbedding())
                .use_in_memory_vector_store()
                .configure_ingestion(lambda ingestion: ingestion.on_startup())
            ),
        ),
    )
    async with builder.build() as host:
        operation = host.services.get(RagIngestionManager).status("handbook").last_operation
        assert operation is not None
        assert operation.state is RagIngestionState.COMPLETED
        progress = operation.progress
        assert (progress.added_documents, progress.failed_documents, progress.skipped_files) == (2, 0, 3)
        assert operation.failures == ()
        hits = (await host.services.get(RagRetriever).retrieve(RagQuery(index_name="handbook", text="leave"))).hits
        assert {hit.document_id for hit in hits} == {"policy.md", "sub/notes.txt"}

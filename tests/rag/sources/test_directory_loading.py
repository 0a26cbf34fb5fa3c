"""DirectorySource through the loaders: the default selects what a loader reads and skips the rest;
explicit patterns read their files; each file loads or fails alone with its loader's code."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from runiq.plugins.registry import ProviderRegistry
from runiq.rag import RagIngestionProgress
from runiq.rag._loaders import DEFAULT_MAX_FILE_BYTES, LoadBudget, LoaderRegistry, register_builtin_loaders
from runiq.rag._registration.builder import IndexBuilder
from runiq.rag._sources import DirectorySource
from runiq.rag.testing import CANARY
from runiq.rag.testing.loader_fakes import CrashingLoader, LeakyLoader
from runiq.settings import DirectorySourceSettings

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56


def _mixed_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "guide.md").write_text("# Leave guide\n\nTwenty-five days a year.\n")
    (root / "notes.txt").write_bytes("Café notes – legacy encoding".encode("cp1252"))
    (root / "faq.json").write_text(json.dumps({"text": "Who approves leave? The team lead.", "lang": "en"}))
    (root / "page.html").write_text(
        "<html><head><title>Desk</title><script>track()</script></head>"
        "<body><nav>Home</nav><main><p>Book travel early.</p></main></body></html>"
    )
    (root / "logo.png").write_bytes(PNG)
    with zipfile.ZipFile(root / "bundle.zip", "w") as archive:
        archive.writestr("inside.txt", "zipped text")
    (root / "tool").write_bytes(ELF)
    (root / "setup.exe").write_bytes(b"MZ\x90\x00" + b"\x00" * 60)
    return root


async def test_the_default_reads_what_a_loader_reads_and_skips_the_rest(tmp_path: Path) -> None:
    """Markdown, text in any encoding, JSON's text field and HTML's main text are documents; the image,
    the archive and the executables are skipped (not failed), in path order."""
    result = await DirectorySource(root=_mixed_folder(tmp_path)).read()
    documents = {d.document_id: d for d in result.documents}
    assert sorted(documents) == ["faq.json", "guide.md", "notes.txt", "page.html"]
    assert result.failures == ()
    assert [s.document_id for s in result.skipped] == ["bundle.zip", "logo.png", "setup.exe", "tool"]
    assert {s.reason for s in result.skipped} == {"unsupported_format"}
    assert documents["guide.md"].title == "Leave guide" and documents["guide.md"].content_type == "text/markdown"
    assert documents["notes.txt"].content == "Café notes – legacy encoding"
    assert documents["notes.txt"].metadata["encoding"] == "cp1252"
    assert documents["faq.json"].content == "Who approves leave? The team lead."
    page = documents["page.html"]
    assert (page.title, "Book travel early." in page.content, "track()" in page.content) == ("Desk", True, False)
    assert "Home" not in page.content
    assert page.metadata["extension"] == "html" and page.metadata["title"] == "Desk"


async def test_an_explicit_pattern_reads_its_files_as_text_when_no_loader_claims_them(tmp_path: Path) -> None:
    """'*.log' reads logs as text (as before loaders); a pattern naming binaries fails them 'undecodable'."""
    (tmp_path / "app.log").write_text("started\nstopped\n")
    (tmp_path / "guide.md").write_text("# Guide\n")
    (tmp_path / "logo.png").write_bytes(PNG)
    logs = await DirectorySource(root=tmp_path, pattern="*.log").read()
    assert [(d.document_id, d.content) for d in logs.documents] == [("app.log", "started\nstopped\n")]
    assert (logs.failures, logs.skipped) == ((), ())
    images = await DirectorySource(root=tmp_path, pattern="*.png").read()
    assert [(f.document_id, f.code) for f in images.failures] == [("logo.png", "undecodable")]
    markdown = await DirectorySource(root=tmp_path, pattern="*.md").read()
    assert [d.title for d in markdown.documents] == ["Guide"]


async def test_a_file_a_loader_cannot_read_fails_alone_with_its_code(tmp_path: Path) -> None:
    """JSON without its text field is 'malformed', a crashing parser 'failed', a loader quoting the
    content 'failed' with nothing of it in the failure; the other files are documents."""
    (tmp_path / "a.json").write_text(json.dumps({"body": "no text field"}))
    (tmp_path / "b.fake").write_text("crash")
    (tmp_path / "c.leak").write_text(f"leaky {CANARY}")
    (tmp_path / "d.md").write_text("fine")
    registry = LoaderRegistry()
    register_builtin_loaders(registry)
    registry.add(CrashingLoader())
    registry.add(LeakyLoader(name="leaky", extensions=frozenset({".leak"})))
    result = await DirectorySource(root=tmp_path, loaders=registry).read()
    assert [d.document_id for d in result.documents] == ["d.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [
        ("a.json", "malformed"),
        ("b.fake", "failed"),
        ("c.leak", "failed"),
    ]
    assert CANARY not in repr(result.failures)


async def test_use_directory_reads_with_the_host_loaders(tmp_path: Path) -> None:
    """A registry handed to the builder (the host's: built-ins and plugins) decides what is read."""
    (tmp_path / "x.fake").write_text("anything")
    registry = LoaderRegistry()
    registry.add(LeakyLoader())
    index = IndexBuilder("docs", ProviderRegistry(), registry).use_directory(tmp_path)
    (source,) = index._sources
    assert isinstance(source, DirectorySource) and source.loaders is registry
    result = await source.read()
    assert [(f.document_id, f.code) for f in result.failures] == [("x.fake", "failed")]
    alone = await DirectorySource(root=tmp_path).read()  # without a registry: the built-ins only
    assert [s.document_id for s in alone.skipped] == ["x.fake"]


def test_one_default_file_size_for_sources_budgets_and_settings() -> None:
    """The directory source, the loader budget, use_directory and runiq.toml share one default."""
    assert DirectorySource(root=Path("/d")).max_file_bytes == LoadBudget().max_file_bytes == DEFAULT_MAX_FILE_BYTES
    assert DirectorySourceSettings(path="d").max_file_bytes is None  # unset: the loaders' default
    index = IndexBuilder("docs", ProviderRegistry()).use_directory("/d")
    assert index._sources[0].max_file_bytes == DEFAULT_MAX_FILE_BYTES  # type: ignore[attr-defined]


def test_skipped_files_are_their_own_counter() -> None:
    """Unchanged documents and files no loader reads are counted apart; neither is a failure."""
    progress = RagIngestionProgress(skipped_files=3)
    assert (progress.skipped_documents, progress.failed_documents, progress.skipped_files) == (0, 0, 3)

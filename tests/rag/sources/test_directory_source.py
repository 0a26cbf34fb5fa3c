"""DirectorySource: pattern rules, recursion, order, escapes, per-file failures and limits."""

from __future__ import annotations

import os
import pathlib
from pathlib import Path

import pytest

from runiq.rag import DirectorySource, DocumentSource, DocumentSourceError, RagConfigurationError


def _write(root: Path, relative: str, text: str = "text") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("pattern", ["folder/*.md", "..", "../*.md", "a\\b.md", "", "   ", "x\x00.md"])
def test_pattern_must_be_a_bare_file_name(tmp_path: Path, pattern: str) -> None:
    """Patterns with separators, '..', NUL or nothing at all are RagConfigurationError."""
    with pytest.raises(RagConfigurationError):
        DirectorySource(root=tmp_path, pattern=pattern)


@pytest.mark.parametrize(("max_file_bytes", "max_documents"), [(0, 10), (10, 0), (-1, 10)])
def test_limits_must_be_positive(tmp_path: Path, max_file_bytes: int, max_documents: int) -> None:
    """Non-positive limits are RagConfigurationError."""
    with pytest.raises(RagConfigurationError):
        DirectorySource(root=tmp_path, max_file_bytes=max_file_bytes, max_documents=max_documents)


def test_construction_does_no_io_and_normalises_the_root(tmp_path: Path) -> None:
    """A missing root is fine at registration; the root becomes absolute and '..' is resolved lexically."""
    source = DirectorySource(root=tmp_path / "missing" / ".." / "later", pattern=" *.md ")
    assert source.root == tmp_path / "later"
    assert source.root.is_absolute()
    assert source.pattern == "*.md"
    assert not (tmp_path / "later").exists()
    assert isinstance(source, DocumentSource)


async def test_missing_root_fails_the_whole_read(tmp_path: Path) -> None:
    """Reading a root that does not exist raises DocumentSourceError."""
    with pytest.raises(DocumentSourceError):
        await DirectorySource(root=tmp_path / "missing").read()


async def test_root_that_is_a_file_fails_the_whole_read(tmp_path: Path) -> None:
    """A root that is a file, not a directory, raises DocumentSourceError."""
    file = _write(tmp_path, "file.md")
    with pytest.raises(DocumentSourceError):
        await DirectorySource(root=file).read()


async def test_recursive_flag_controls_subdirectories(tmp_path: Path) -> None:
    """Without recursive only the top level is read; with it, subdirectories too."""
    _write(tmp_path, "top.md")
    _write(tmp_path, "sub/inner.md")
    _write(tmp_path, "sub/deeper/deep.md")
    flat = await DirectorySource(root=tmp_path, pattern="*.md").read()
    deep = await DirectorySource(root=tmp_path, pattern="*.md", recursive=True).read()
    assert [d.document_id for d in flat.documents] == ["top.md"]
    assert [d.document_id for d in deep.documents] == ["sub/deeper/deep.md", "sub/inner.md", "top.md"]


async def test_pattern_filters_files(tmp_path: Path) -> None:
    """Only files matching the pattern are read; directories matching it are ignored."""
    _write(tmp_path, "a.md")
    _write(tmp_path, "b.txt")
    (tmp_path / "dir.md").mkdir()
    result = await DirectorySource(root=tmp_path, pattern="*.md").read()
    assert [d.document_id for d in result.documents] == ["a.md"]
    assert result.failures == ()


async def test_order_is_deterministic_by_relative_path(tmp_path: Path) -> None:
    """Documents come back sorted by relative path whatever the creation order."""
    for name in ["c.md", "a.md", "B.md", "sub/a.md", "b.md"]:
        _write(tmp_path, name)
    source = DirectorySource(root=tmp_path, pattern="*.md", recursive=True)
    ids = [d.document_id for d in (await source.read()).documents]
    assert ids == sorted(ids)
    assert ids == [d.document_id for d in (await source.read()).documents]


async def test_documents_carry_ids_content_types_and_titles(tmp_path: Path) -> None:
    """Ids are '/'-separated relative paths; .md is Markdown, other files plain text; BOMs are dropped."""
    _write(tmp_path, "sub/Policy.MD", "# Policy")
    (tmp_path / "notes.txt").write_bytes("\ufeffplain".encode())
    result = await DirectorySource(root=tmp_path, recursive=True).read()
    by_id = {d.document_id: d for d in result.documents}
    assert set(by_id) == {"notes.txt", "sub/Policy.MD"}
    assert by_id["sub/Policy.MD"].content_type == "text/markdown"
    assert by_id["sub/Policy.MD"].title == "Policy"
    assert by_id["notes.txt"].content_type == "text/plain"
    assert by_id["notes.txt"].content == "plain"


async def test_symlink_escaping_the_root_is_refused(tmp_path: Path) -> None:
    """A symlink that resolves outside the root is reported as 'outside_root' and not read."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    _write(outside, "secret.md", "outside secret")
    _write(root, "ok.md", "inside")
    os.symlink(outside / "secret.md", root / "escape.md")
    os.symlink("../outside/secret.md", root / "relative.md")
    result = await DirectorySource(root=root, pattern="*.md").read()
    assert [d.document_id for d in result.documents] == ["ok.md"]
    assert {(f.document_id, f.code) for f in result.failures} == {
        ("escape.md", "outside_root"),
        ("relative.md", "outside_root"),
    }
    assert all("outside secret" not in d.content for d in result.documents)


async def test_symlinked_directory_outside_the_root_is_not_followed_out(tmp_path: Path) -> None:
    """Recursion never delivers a file that lives outside the root."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    _write(outside, "secret.md", "outside secret")
    _write(root, "ok.md")
    os.symlink(outside, root / "linked")
    result = await DirectorySource(root=root, pattern="*.md", recursive=True).read()
    assert [d.document_id for d in result.documents] == ["ok.md"]
    assert all(f.code == "outside_root" for f in result.failures)


async def test_symlink_inside_the_root_and_symlinked_root_are_allowed(tmp_path: Path) -> None:
    """Links that stay inside the (resolved) root are read normally."""
    real = tmp_path / "real"
    _write(real, "a.md", "alpha")
    os.symlink(real / "a.md", real / "alias.md")
    os.symlink(real, tmp_path / "root-link")
    result = await DirectorySource(root=tmp_path / "root-link", pattern="*.md").read()
    assert {d.document_id: d.content for d in result.documents} == {"a.md": "alpha", "alias.md": "alpha"}
    assert result.failures == ()


async def test_undecodable_file_is_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    """Invalid UTF-8 is an 'undecodable' failure; other files are still delivered."""
    _write(tmp_path, "a.md", "alpha")
    (tmp_path / "b.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    _write(tmp_path, "c.md", "gamma")
    result = await DirectorySource(root=tmp_path, pattern="*.md").read()
    assert [d.document_id for d in result.documents] == ["a.md", "c.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [("b.md", "undecodable")]


async def test_too_large_file_is_reported_and_skipped(tmp_path: Path) -> None:
    """A file above max_file_bytes is a 'too_large' failure; a file at the limit is read."""
    _write(tmp_path, "big.md", "x" * 101)
    _write(tmp_path, "edge.md", "x" * 100)
    result = await DirectorySource(root=tmp_path, pattern="*.md", max_file_bytes=100).read()
    assert [d.document_id for d in result.documents] == ["edge.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [("big.md", "too_large")]


async def test_unreadable_file_is_reported_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError while reading one file is an 'unreadable' failure; the batch continues."""
    _write(tmp_path, "a.md", "alpha")
    _write(tmp_path, "locked.md", "locked")
    _write(tmp_path, "z.md", "zeta")
    real_read_bytes = pathlib.Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real_read_bytes(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    result = await DirectorySource(root=tmp_path, pattern="*.md").read()
    assert [d.document_id for d in result.documents] == ["a.md", "z.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [("locked.md", "unreadable")]


async def test_document_count_limit_reports_the_excess(tmp_path: Path) -> None:
    """Files beyond max_documents are 'too_many_documents' failures, the first ones are read."""
    for name in ["a.md", "b.md", "c.md"]:
        _write(tmp_path, name)
    result = await DirectorySource(root=tmp_path, pattern="*.md", max_documents=2).read()
    assert [d.document_id for d in result.documents] == ["a.md", "b.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [("c.md", "too_many_documents")]


def test_identity_is_stable_and_depends_on_the_configuration(tmp_path: Path) -> None:
    """The same configuration gives the same identity; another pattern or recursion flag another one."""
    base = DirectorySource(root=tmp_path, pattern="*.md")
    assert base.identity == DirectorySource(root=tmp_path, pattern="*.md").identity
    assert base.identity != DirectorySource(root=tmp_path, pattern="*.txt").identity
    assert base.identity != DirectorySource(root=tmp_path, pattern="*.md", recursive=True).identity
    assert base.source_kind == "directory"


async def test_file_names_that_are_not_utf8_never_become_invalid_text_ids(tmp_path: Path) -> None:
    """A file whose name is not valid UTF-8 (Latin-1 bytes) is delivered or reported, but every id is
    encodable text (no lone surrogates that break logs, JSON payloads and database drivers)."""
    (tmp_path / os.fsdecode(b"caf\xe9.md")).write_bytes(b"Latin-1 named file")
    _write(tmp_path, "good.md", "good")
    result = await DirectorySource(root=tmp_path, pattern="*.md").read()
    ids = [d.document_id for d in result.documents] + [f.document_id for f in result.failures]
    assert "good.md" in [d.document_id for d in result.documents]
    assert len(ids) == 2
    for document_id in ids:
        document_id.encode("utf-8")  # raises UnicodeEncodeError for surrogate-escaped names

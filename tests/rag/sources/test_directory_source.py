"""DirectorySource: pattern rules, recursion, order, escapes, per-file failures and limits."""

from __future__ import annotations

import asyncio
import os
import random
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from runiq.errors import DocumentSourceError
from runiq.rag import RagConfigurationError, RagDocument
from runiq.rag._sources import DirectorySource
from runiq.rag.providers import DocumentSource, SourceFailure
from runiq.rag.testing.chains import assert_content_free


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


PRIVATE_ROOT = "CANARY-private-root"


async def test_missing_root_fails_the_whole_read(tmp_path: Path) -> None:
    """Reading a root that does not exist raises DocumentSourceError; the OSError naming the path is
    not kept, not even as ``__context__``."""
    with pytest.raises(DocumentSourceError) as caught:
        await DirectorySource(root=tmp_path / PRIVATE_ROOT / "missing").read()
    assert caught.value.__context__ is None
    assert_content_free(caught.value, PRIVATE_ROOT)


async def test_root_that_is_a_file_fails_the_whole_read(tmp_path: Path) -> None:
    """A root that is a file, not a directory, raises DocumentSourceError."""
    file = _write(tmp_path, f"{PRIVATE_ROOT}.md")
    with pytest.raises(DocumentSourceError) as caught:
        await DirectorySource(root=file).read()
    assert_content_free(caught.value, PRIVATE_ROOT)


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
    assert by_id["notes.txt"].title == "notes"  # no heading-like first line: the file name's stem


async def test_a_text_file_heading_line_is_its_title(tmp_path: Path) -> None:
    """A short first line on its own above the text titles a .txt file; a first sentence does not."""
    _write(tmp_path, "0001.txt", "Remote work policy\n\nStaff may work remotely three days a week.\n")
    _write(tmp_path, "0002.txt", "Staff may work remotely.\n\nThree days a week.\n")
    result = await DirectorySource(root=tmp_path).read()
    assert {d.document_id: d.title for d in result.documents} == {"0001.txt": "Remote work policy", "0002.txt": "0002"}


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


def _refuse_open(monkeypatch: pytest.MonkeyPatch, refused: str) -> None:
    """Make opening the entry named ``refused`` fail as a permission error would (tests run as root)."""
    real_open = os.open

    def fake_open(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if os.path.basename(path) == refused:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake_open)


async def test_unreadable_file_is_reported_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError while reading one file is an 'unreadable' failure; the batch continues."""
    _write(tmp_path, "a.md", "alpha")
    _write(tmp_path, "locked.md", "locked")
    _write(tmp_path, "z.md", "zeta")
    _refuse_open(monkeypatch, "locked.md")
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


def _lstat(path: Path) -> os.stat_result:
    return os.lstat(path)


def _ids_and_codes(failures: tuple[SourceFailure, ...]) -> set[tuple[str, str]]:
    return {(f.document_id, f.code) for f in failures}


async def test_symlink_loops_are_failures_and_the_rest_is_read(tmp_path: Path) -> None:
    """A link to itself, two links to each other and a link through a looping directory link are
    'symlink_loop' failures with relative ids (no absolute path); the good files are still read.
    (Before: ``Path.resolve`` raised RuntimeError, carrying the absolute path, and the run was lost.)"""
    _write(tmp_path, "a-good.md", "alpha")
    _write(tmp_path, "z-good.md", "zeta")
    os.symlink("self.md", tmp_path / "self.md")
    os.symlink("pong.md", tmp_path / "ping.md")
    os.symlink("ping.md", tmp_path / "pong.md")
    os.symlink("loopdir", tmp_path / "loopdir")
    os.symlink("loopdir/x.md", tmp_path / "through.md")
    result = await DirectorySource(root=tmp_path, pattern="*.md", recursive=True).read()
    assert {d.document_id: d.content for d in result.documents} == {"a-good.md": "alpha", "z-good.md": "zeta"}
    assert _ids_and_codes(result.failures) == {
        ("self.md", "symlink_loop"),
        ("ping.md", "symlink_loop"),
        ("pong.md", "symlink_loop"),
        ("through.md", "symlink_loop"),
    }
    assert all(str(tmp_path) not in f.document_id for f in result.failures)


def _build_chain(parent: Path, depth: int, leaf: str, text: str) -> None:
    """``parent/d/d/.../d/leaf`` with ``depth`` directories, built bottom-up with short paths only
    (the full path would not fit PATH_MAX for deep enough chains)."""
    os.mkdir(parent / "d")
    (parent / "d" / leaf).write_text(text, encoding="utf-8")
    for _ in range(depth - 1):
        os.mkdir(parent / "n")
        os.rename(parent / "d", parent / "n" / "d")
        os.rename(parent / "n", parent / "d")


def _remove_chain(parent: Path) -> None:
    """Remove a chain built by ``_build_chain`` top-down, again with short paths only."""
    top = parent / "d"
    while top.exists():
        for entry in os.scandir(top):
            if entry.is_dir(follow_symlinks=False):
                os.rename(entry.path, parent / "n")
            else:
                os.unlink(entry.path)
        os.rmdir(top)
        if (parent / "n").exists():
            os.rename(parent / "n", top)


@pytest.fixture
def deep_tree(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    depth = sys.getrecursionlimit() + 25
    _build_chain(tmp_path, depth, "deep.md", "at the bottom")
    try:
        yield tmp_path, depth
    finally:
        _remove_chain(tmp_path)  # pytest's own clean-up of tmp_path recurses and would fail


async def test_tree_deeper_than_the_recursion_limit_is_walked(deep_tree: tuple[Path, int]) -> None:
    """A chain of directories deeper than sys.getrecursionlimit() is walked without recursion: the
    file at the bottom and a good file beside the chain are both read (before: RecursionError)."""
    root, depth = deep_tree
    _write(root, "good.md", "good")
    result = await DirectorySource(root=root, pattern="*.md", recursive=True).read()
    assert result.failures == ()
    assert {d.document_id: d.content for d in result.documents} == {
        "d/" * depth + "deep.md": "at the bottom",
        "good.md": "good",
    }


async def test_directory_seen_twice_is_reported_once_and_not_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory whose (st_dev, st_ino) was already walked (a bind mount of an ancestor makes this a
    cycle; faked here, as making one needs privileges) is a 'directory_cycle' failure, not walked again."""
    _write(tmp_path, "a/one.md", "one")
    _write(tmp_path, "a/b/two.md", "two")
    real_fstat = os.fstat
    b_info, root_info = _lstat(tmp_path / "a" / "b"), _lstat(tmp_path)

    def fstat(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        if (info.st_dev, info.st_ino) == (b_info.st_dev, b_info.st_ino):
            fields = list(info)
            fields[stat.ST_DEV], fields[stat.ST_INO] = root_info.st_dev, root_info.st_ino  # 'b' claims to be the root
            return os.stat_result(fields)
        return info

    monkeypatch.setattr(os, "fstat", fstat)
    result = await DirectorySource(root=tmp_path, pattern="*.md", recursive=True).read()
    assert [d.document_id for d in result.documents] == ["a/one.md"]
    assert _ids_and_codes(result.failures) == {("a/b", "directory_cycle")}


async def test_unlistable_subdirectory_is_reported_and_the_rest_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subdirectory that cannot be opened is an 'unreadable_directory' failure (before: skipped in
    silence); files beside it are read."""
    _write(tmp_path, "a.md", "alpha")
    _write(tmp_path, "locked/inner.md", "inner")
    _write(tmp_path, "open/b.md", "beta")
    _refuse_open(monkeypatch, "locked")
    result = await DirectorySource(root=tmp_path, pattern="*.md", recursive=True).read()
    assert [d.document_id for d in result.documents] == ["a.md", "open/b.md"]
    assert [(f.document_id, f.code) for f in result.failures] == [("locked", "unreadable_directory")]


async def test_unlistable_root_fails_the_whole_read_without_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root that exists but cannot be listed raises DocumentSourceError (before: an empty result, which
    would have deleted every stored document); nothing in the error carries the path."""
    _write(tmp_path, "a.md")

    def scandir(target: object) -> object:
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(DocumentSourceError) as caught:
        await DirectorySource(root=tmp_path).read()
    error = caught.value
    assert error.__cause__ is None
    assert error.__context__ is None  # the PermissionError names the path
    assert_content_free(error, str(tmp_path))


async def test_blank_file_name_is_a_failure_not_an_abort(tmp_path: Path) -> None:
    """A file whose name is only spaces cannot be a document id: 'invalid_name' when a pattern selects
    it, the rest is read (before: RagValidationError aborted the run); the default skips it (no loader
    reads a name without an extension)."""
    _write(tmp_path, "   ", "blank")
    _write(tmp_path, "ok.txt", "fine")
    result = await DirectorySource(root=tmp_path, pattern="?*").read()
    assert [d.document_id for d in result.documents] == ["ok.txt"]
    assert [(f.document_id, f.code) for f in result.failures] == [("   ", "invalid_name")]
    default = await DirectorySource(root=tmp_path).read()
    assert ([d.document_id for d in default.documents], default.failures) == (["ok.txt"], ())
    assert [s.document_id for s in default.skipped] == ["   "]


async def test_symlinks_inside_the_root_follow_one_rule(tmp_path: Path) -> None:
    """Matching links are read when every hop stays inside the root (relative, '..', through a linked
    directory, absolute via the configured root) and are 'outside_root' as soon as one leaves it;
    directory links are not walked; links to directories and dangling links inside are skipped."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    _write(outside, "secret.md", "outside secret")
    _write(root, "a.md", "alpha")
    _write(root, "sub/b.md", "beta")
    os.symlink("sub", root / "linkdir")
    os.symlink("linkdir/b.md", root / "via-dir-link.md")
    os.symlink("../a.md", root / "sub" / "up.md")
    os.symlink(root / "sub" / "b.md", root / "absolute.md")
    os.symlink("../../outside/secret.md", root / "sub" / "escape.md")
    os.symlink("linkdir/../../outside/secret.md", root / "dotdot-escape.md")
    os.symlink(outside, root / "outlink")
    os.symlink("outlink/secret.md", root / "through-outlink.md")
    os.symlink("sub", root / "dir.md")
    os.symlink("missing.md", root / "dangling.md")
    result = await DirectorySource(root=root, pattern="*.md", recursive=True).read()
    assert {d.document_id: d.content for d in result.documents} == {
        "a.md": "alpha",
        "absolute.md": "beta",
        "sub/b.md": "beta",
        "sub/up.md": "alpha",
        "via-dir-link.md": "beta",
    }
    assert _ids_and_codes(result.failures) == {
        ("dotdot-escape.md", "outside_root"),
        ("sub/escape.md", "outside_root"),
        ("through-outlink.md", "outside_root"),
    }


async def test_fifo_matching_the_pattern_is_skipped_without_blocking(tmp_path: Path) -> None:
    """A FIFO (directly or through a link) is not a regular file: skipped, and opening it never waits
    for a writer."""
    _write(tmp_path, "a.md", "alpha")
    os.mkfifo(tmp_path / "pipe")
    os.symlink("pipe", tmp_path / "pipe.md")
    result = await asyncio.wait_for(DirectorySource(root=tmp_path, pattern="*").read(), timeout=30)
    assert [d.document_id for d in result.documents] == ["a.md"]
    assert result.failures == ()


async def test_walking_and_reading_happen_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every directory listing runs on a worker thread, not the event loop's."""
    _write(tmp_path, "sub/a.md")
    real_scandir = os.scandir
    threads: list[int] = []

    def scandir(target: int) -> Any:
        threads.append(threading.get_ident())
        return real_scandir(target)

    monkeypatch.setattr(os, "scandir", scandir)
    result = await DirectorySource(root=tmp_path, pattern="*.md", recursive=True).read()
    assert [d.document_id for d in result.documents] == ["sub/a.md"]
    assert threads and threading.get_ident() not in threads


async def test_a_stream_lists_and_reads_in_one_thread_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not in the loop's default pool: glibc gives each thread that allocates a malloc arena of its own,
    which keeps its peak, so a long run whose reads spread over a pool's threads grew by an arena each."""
    from runiq.rag._sources import directory

    for i in range(2500):  # three listing windows, forty read batches: work a pool spreads over threads
        _write(tmp_path, f"d{i // 500}/f{i:04d}.md")
    threads: set[int] = set()
    real_scandir, real_read = os.scandir, directory._read_regular_file

    def scandir(target: int) -> Any:
        threads.add(threading.get_ident())
        return real_scandir(target)

    def read(*args: Any) -> Any:
        threads.add(threading.get_ident())
        return real_read(*args)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(directory, "_read_regular_file", read)
    source = DirectorySource(root=tmp_path, pattern="*.md", recursive=True)
    ids = [item.document_id async for item in source.stream()]
    assert len(ids) == 2500
    assert len(threads) == 1
    assert threading.get_ident() not in threads


async def test_swapping_a_subdirectory_for_an_outside_link_never_leaks_outside_content(tmp_path: Path) -> None:
    """A thread swaps root/sub for a symlink to an outside directory holding files of the same names,
    in a tight loop, while the source reads again and again: no read returns outside content or fails
    as a whole. (Before: each file was checked by path, then read by path again, so a swap in between
    read the outside file; on this 2-core machine, 2,000 reads leaked in 6 of 6 runs, and the walk also
    raised FileNotFoundError for the whole read.)"""
    root, outside, hold, link = tmp_path / "root", tmp_path / "outside", tmp_path / "hold", tmp_path / "link"
    names = [f"f{i:02d}.md" for i in range(20)]
    for name in names:
        _write(root / "sub", name, f"inside {name}")
        _write(outside, name, "OUTSIDE SECRET")
    _write(root, "good.md", "inside good.md")
    os.symlink(outside, link)
    stop, swaps = threading.Event(), [0]

    def swap() -> None:
        pause = random.Random(23)  # uneven dwell times, so the swaps do not fall into step with the reads
        while not stop.is_set():
            os.rename(root / "sub", hold)
            os.rename(link, root / "sub")
            for _ in range(pause.randrange(12)):
                os.stat(tmp_path)
            os.rename(root / "sub", link)
            os.rename(hold, root / "sub")
            for _ in range(pause.randrange(12)):
                os.stat(tmp_path)
            swaps[0] += 1

    swapper = threading.Thread(target=swap)
    swapper.start()
    source = DirectorySource(root=root, pattern="*.md", recursive=True)
    try:
        for _ in range(2000):
            result = await source.read()
            for document in result.documents:
                assert document.content == f"inside {PurePosixPath(document.document_id).name}"
            assert "good.md" in [d.document_id for d in result.documents]
    finally:
        stop.set()
        swapper.join()
    assert swaps[0] > 0


async def test_the_source_streams_without_reading_ahead(tmp_path: Path) -> None:
    """Only a small batch is read before the consumer asks for more: memory does not grow with the tree."""
    for i in range(500):
        (tmp_path / f"doc-{i:04}.md").write_text(f"Document {i}.")
    stream = DirectorySource(root=tmp_path, pattern="*.md").stream()
    first = await anext(stream)
    for path in tmp_path.iterdir():  # noqa: ASYNC240 - the stream is paused here on purpose
        path.unlink()  # everything not read yet is gone
    rest = [item async for item in stream]
    assert isinstance(first, RagDocument) and first.document_id == "doc-0000.md"
    assert 0 < len(rest) < 100


async def test_streaming_order_is_the_sorted_relative_path(tmp_path: Path) -> None:
    """Depth-first, yet in the order of the full relative paths ('a.md' before 'a/b.md', '.' < '/')."""
    for relative in ("a/b.md", "a.md", "a-b.md", "a/a/z.md", "b.md", "a0.md"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x")
    ids = [item.document_id async for item in DirectorySource(root=tmp_path, pattern="*.md", recursive=True).stream()]
    assert ids == sorted(ids) == ["a-b.md", "a.md", "a/a/z.md", "a/b.md", "a0.md", "b.md"]


async def test_a_consumer_that_stops_early_closes_every_handle(tmp_path: Path) -> None:
    for i in range(200):
        (tmp_path / f"d{i % 10}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 10}" / f"{i}.md").write_text("x")
    before = len(os.listdir("/proc/self/fd"))
    stream = DirectorySource(root=tmp_path, pattern="*.md", recursive=True).stream()
    await anext(stream)
    await stream.aclose()
    assert len(os.listdir("/proc/self/fd")) == before


async def test_a_stream_cancelled_twice_while_reading_still_closes_its_handles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The close waits in the stream's thread behind the batch being read; a second cancellation in
    that wait (a task group tearing down, a cancel scope) must not drop it and leak the root's handles."""
    from runiq.rag._sources import directory

    for i in range(20):
        _write(tmp_path, f"f{i:02d}.md")
    reading = threading.Event()
    real_read = directory._read_regular_file

    def slow_read(*args: Any) -> Any:
        reading.set()
        time.sleep(0.05)
        return real_read(*args)

    monkeypatch.setattr(directory, "_read_regular_file", slow_read)
    before = len(os.listdir("/proc/self/fd"))

    async def consume() -> None:
        async for _ in DirectorySource(root=tmp_path, pattern="*.md").stream():
            pass

    for _ in range(3):
        reading.clear()
        task = asyncio.create_task(consume())
        assert await asyncio.to_thread(reading.wait, 10)  # a batch is being read in the stream's thread
        task.cancel()
        await asyncio.sleep(0.01)  # the stream's finally now waits for its close behind the batch
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    for _ in range(100):  # the shielded closes finish in the stream's thread after the batch
        if len(os.listdir("/proc/self/fd")) == before:
            break
        await asyncio.sleep(0.02)
    assert len(os.listdir("/proc/self/fd")) == before


async def test_there_is_no_document_cap_unless_configured(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"{i}.md").write_text("x")
    assert DirectorySource(root=tmp_path).max_documents is None
    capped = await DirectorySource(root=tmp_path, pattern="*.md", max_documents=3).read()
    assert len(capped.documents) == 3
    assert [f.code for f in capped.failures] == ["too_many_documents"] * 2

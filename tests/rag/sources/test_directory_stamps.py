"""DirectorySource as a StampedSource: candidates listed with stamps (size, mtime_ns, a salt of source
and loader) before any read; only the chosen ones are read; the rest come back as SourceUnchanged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from runiq.rag import RagDocument
from runiq.rag._loaders.builtin import builtin_registry
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag._sources import DirectorySource, SourceSkip, SourceStamp, SourceUnchanged, StampedItem, StampedSource


def _old(path: Path, content: bytes | str, seconds: int = 100) -> None:
    if isinstance(content, str):
        path.write_text(content)
    else:
        path.write_bytes(content)
    when = time.time_ns() - seconds * 1_000_000_000
    os.utime(path, ns=(when, when))


class Chooser:
    """Reads the ids in ``read``; records every window it was asked about."""

    def __init__(self, read: set[str]) -> None:
        self.read = read
        self.windows: list[list[SourceStamp]] = []

    async def __call__(self, candidates: Sequence[SourceStamp]) -> list[bool]:
        self.windows.append(list(candidates))
        return [c.document_id in self.read for c in candidates]


async def _items(source: DirectorySource, chooser: Chooser) -> list[StampedItem]:
    return [item async for item in source.stream_changed(chooser)]


async def test_candidates_are_stamped_before_reading_and_only_chosen_ones_are_read(tmp_path: Path) -> None:
    """Stamps are ``size:mtime_ns:salt``; unchosen candidates come back unread, in path order; files no
    loader reads are skipped as by ``stream`` and never offered to the chooser."""
    _old(tmp_path / "a.txt", "Alpha.")
    _old(tmp_path / "b.txt", "Bravo text.")
    _old(tmp_path / "c.bin", b"\x00\x01")
    source = DirectorySource(root=tmp_path)
    assert isinstance(source, StampedSource)
    chooser = Chooser({"b.txt"})
    items = await _items(source, chooser)
    assert [type(item).__name__ for item in items] == ["SourceUnchanged", "RagDocument", "SourceSkip"]
    assert items[0] == SourceUnchanged(("a.txt",)) and items[2] == SourceSkip(document_id="c.bin")
    assert isinstance(items[1], RagDocument) and items[1].content == "Bravo text."
    [window] = chooser.windows
    assert [c.document_id for c in window] == ["a.txt", "b.txt"]
    info = (tmp_path / "a.txt").stat()
    stamp = window[0].stamp
    assert stamp is not None and stamp.startswith(f"{info.st_size}:{info.st_mtime_ns}:")
    assert window[1].stamp is not None and window[1].stamp.split(":")[2] == stamp.split(":")[2]  # same loader


async def test_recent_future_symlinked_and_too_large_files_get_no_stamp(tmp_path: Path) -> None:
    """Only a regular file safely older than its listing, within the size limit, is stamped."""
    _old(tmp_path / "old.txt", "Old.")
    (tmp_path / "recent.txt").write_text("Recent.")
    _old(tmp_path / "future.txt", "Future.", seconds=-3600)
    _old(tmp_path / "large.txt", "x" * 64)
    (tmp_path / "link.txt").symlink_to(tmp_path / "old.txt")
    chooser = Chooser(set())
    await _items(DirectorySource(root=tmp_path, max_file_bytes=32), chooser)
    stamps = {c.document_id: c.stamp for window in chooser.windows for c in window}
    assert {name for name, stamp in stamps.items() if stamp is not None} == {"old.txt"}
    assert set(stamps) == {"old.txt", "recent.txt", "future.txt", "large.txt", "link.txt"}


async def test_the_salt_changes_with_the_loader_and_the_source(tmp_path: Path) -> None:
    """Another loader for the file, or another root, gives another stamp for the same file."""
    other = tmp_path / "other"
    other.mkdir()
    _old(tmp_path / "a.md", "# A")
    _old(other / "a.md", "# A")
    os.utime(other / "a.md", ns=((tmp_path / "a.md").stat().st_atime_ns, (tmp_path / "a.md").stat().st_mtime_ns))

    async def stamp_of(source: DirectorySource) -> str | None:
        chooser = Chooser(set())
        await _items(source, chooser)
        return chooser.windows[0][0].stamp

    markdown = await stamp_of(DirectorySource(root=tmp_path, pattern="*.md", loaders=builtin_registry()))
    as_text = await stamp_of(DirectorySource(root=tmp_path, pattern="*.md", loaders=LoaderRegistry()))
    elsewhere = await stamp_of(DirectorySource(root=other, pattern="*.md", loaders=builtin_registry()))
    again = await stamp_of(DirectorySource(root=tmp_path, pattern="*.md", loaders=builtin_registry()))
    assert None not in (markdown, as_text, elsewhere)
    assert len({markdown, as_text, elsewhere}) == 3 and again == markdown


async def test_windows_are_bounded_and_stop_early_closes_the_handles(tmp_path: Path) -> None:
    """Candidates are offered a window at a time; a consumer that stops early leaves no handle open."""
    for n in range(1100):
        (tmp_path / f"{n:04d}.txt").write_text("x")
    chooser = Chooser(set())
    items = await _items(DirectorySource(root=tmp_path, pattern="*.txt"), chooser)
    assert [len(w) for w in chooser.windows] == [1024, 76]
    assert items == [
        SourceUnchanged(tuple(f"{n:04d}.txt" for n in range(start, stop))) for start, stop in ((0, 1024), (1024, 1100))
    ]
    before = len(os.listdir("/proc/self/fd"))
    stream = DirectorySource(root=tmp_path, pattern="*.txt").stream_changed(Chooser({"0000.txt"}))
    await anext(stream)
    await stream.aclose()
    assert len(os.listdir("/proc/self/fd")) == before


def test_the_salt_does_not_follow_the_string_hash_seed(tmp_path: Path) -> None:
    """A loader configured with a set (the text loader's extensions) salts every process alike: with the
    set's own order in the salt, about half of all restarts would read every file again."""
    _old(tmp_path / "a.txt", "A")
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from runiq.rag._loaders.builtin import builtin_registry\n"
        "from runiq.rag._sources import DirectorySource\n"
        "async def main():\n"
        "    seen = []\n"
        "    async def choose(stamps):\n"
        "        seen.extend(s.stamp for s in stamps)\n"
        "        return [False] * len(stamps)\n"
        "    source = DirectorySource(root=Path(sys.argv[1]), pattern='*.txt')\n"
        "    [item async for item in source.stream_changed(choose)]\n"
        "    extensions = builtin_registry().spec_for_path('a.txt').loader.extensions\n"
        "    print(list(extensions), seen[0])\n"
        "asyncio.run(main())\n"
    )
    runs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.add(done.stdout.strip())
    orders = {run.rpartition(" ")[0] for run in runs}
    salts = {run.rpartition(" ")[2] for run in runs}
    assert len(orders) > 1  # the seeds do order the set differently on this interpreter
    assert len(salts) == 1

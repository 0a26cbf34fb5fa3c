"""ConfinedRoot: opening beneath a root handle, symlinks expanded without leaving the root, under races."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from runiq.rag._sources.confined import MAX_SYMLINKS, ConfinedRoot, OutsideRoot, SymlinkLoop


def _read(root: ConfinedRoot, *parts: str) -> bytes:
    fd = root.open_file(parts)
    try:
        return os.read(fd, 1024)
    finally:
        os.close(fd)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "f.md").write_bytes(b"inside")
    (outside / "f.md").write_bytes(b"OUTSIDE")
    return root, outside


def test_links_are_followed_inside_and_refused_outside(layout: tuple[Path, Path]) -> None:
    """Relative, '..' and absolute links that stay inside are read; any hop above the root is OutsideRoot."""
    root, outside = layout
    os.symlink("sub/f.md", root / "rel")
    os.symlink("../sub/./f.md", root / "sub" / "up")
    os.symlink(root / "sub" / "f.md", root / "abs")
    os.symlink("../outside/f.md", root / "escape")
    os.symlink(outside / "f.md", root / "abs-escape")
    os.symlink(f"{root}/../outside/f.md", root / "abs-dotdot")
    with ConfinedRoot(root) as confined:
        assert _read(confined, "rel") == _read(confined, "sub", "up") == _read(confined, "abs") == b"inside"
        for name in ("escape", "abs-escape", "abs-dotdot"):
            with pytest.raises(OutsideRoot):
                confined.open_file((name,))


def test_link_chains_longer_than_the_limit_are_loops(layout: tuple[Path, Path]) -> None:
    """A chain of exactly MAX_SYMLINKS links is followed; one more is SymlinkLoop, as is a cycle."""
    root, _ = layout
    os.symlink("sub/f.md", root / "l0")
    for index in range(1, MAX_SYMLINKS + 1):
        os.symlink(f"l{index - 1}", root / f"l{index}")
    os.symlink("cycle", root / "cycle")
    with ConfinedRoot(root) as confined:
        assert _read(confined, f"l{MAX_SYMLINKS - 1}") == b"inside"
        for name in (f"l{MAX_SYMLINKS}", "cycle"):
            with pytest.raises(SymlinkLoop):
                confined.open_file((name,))


def test_directory_refuses_a_symlinked_component(layout: tuple[Path, Path]) -> None:
    """``directory`` only walks real directories: a symlink there is an OSError, even one pointing inside."""
    root, _ = layout
    os.symlink("sub", root / "alias")
    with ConfinedRoot(root) as confined:
        assert confined.directory(("sub",)) >= 0
        with pytest.raises(OSError, match=r"Not a directory|symbolic links"):  # ENOTDIR on Linux, ELOOP elsewhere
            confined.directory(("alias",))


def test_no_handle_is_left_open(layout: tuple[Path, Path]) -> None:
    """Every handle the root opened (root, cached directories, resolution steps) is closed by close()."""
    root, _ = layout
    os.symlink("../sub/f.md", root / "sub" / "up")
    os.symlink("../../outside/f.md", root / "sub" / "escape")
    before = set(os.listdir("/proc/self/fd"))
    with ConfinedRoot(root) as confined:
        for _ in range(3):
            _read(confined, "sub", "up")
            with pytest.raises(OutsideRoot):
                confined.open_file(("sub", "escape"))
    assert set(os.listdir("/proc/self/fd")) == before


def test_component_swapped_for_an_outside_link_is_never_read_through(layout: tuple[Path, Path]) -> None:
    """While a thread swaps root/sub for a link to the outside directory, opening sub/f.md from a fresh
    root handle either reads the inside file, finds nothing, or refuses (OutsideRoot); it never reads
    the outside file."""
    root, outside = layout
    hold, link = root.parent / "hold", root.parent / "link"
    os.symlink(outside, link)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(root / "sub", hold)
            os.rename(link, root / "sub")
            os.rename(root / "sub", link)
            os.rename(hold, root / "sub")

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes: set[str] = set()
    try:
        for _ in range(3000):
            with ConfinedRoot(root) as confined:
                try:
                    outcomes.add(_read(confined, "sub", "f.md").decode())
                except OutsideRoot:
                    outcomes.add("outside_root")
                except OSError:
                    outcomes.add("gone")  # missing, or swapped back between the open and the readlink
    finally:
        stop.set()
        swapper.join()
    assert "OUTSIDE" not in outcomes
    assert outcomes <= {"inside", "outside_root", "gone"}

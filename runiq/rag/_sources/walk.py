"""Finding the files under a confined root whose names match a pattern.

The walk is iterative (an explicit stack: no recursion limit on depth) and goes through directory
handles, never paths. Symlinked directories are not descended into; a symlink whose name matches is a
candidate like a file (the read decides whether it stays inside the root). A directory seen twice (by
``(st_dev, st_ino)``: a bind mount of an ancestor, or one moved during the walk) is reported, not
walked again. A subdirectory that cannot be listed is reported and the walk goes on; the root not being
listable raises ``OSError``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

from runiq.rag._sources.confined import ConfinedRoot, Parts

__all__ = ["Found", "iter_files"]

# A directory that became a symlink, a file or nothing since it was listed: it is simply not there.
_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})


Found = tuple[Parts, str | None]  # a matching file (code None), or a directory and a failure code


def iter_files(root: ConfinedRoot, matches: Callable[[str], object], *, recursive: bool) -> Iterator[Found]:
    """Every candidate under the root, lazily, in the order of their relative paths.

    Depth-first with each directory's entries sorted by ``name + "/"`` for directories, so the order
    equals a sort of the full relative paths while only the directories on the current path are held.
    ``matches`` answers a truthy value for names to keep. The root not being listable raises ``OSError``.
    """
    seen: set[tuple[int, int]] = set()
    first = _listed((), root, seen)  # raises OSError when the root cannot be listed
    if not isinstance(first, list):
        return
    stack: list[tuple[Parts, list[tuple[str, bool]]]] = [((), first)]
    while stack:
        parts, pending = stack[-1]
        if not pending:
            stack.pop()
            continue
        name, is_directory = pending.pop()
        child = (*parts, name)
        if not is_directory:
            if matches(name):
                yield child, None
            continue
        if not recursive:
            continue
        listed = _listed(child, root, seen)
        if isinstance(listed, str):
            yield child, listed
        elif listed is not None:
            stack.append((child, listed))


def _listed(parts: Parts, root: ConfinedRoot, seen: set[tuple[int, int]]) -> list[tuple[str, bool]] | str | None:
    """A directory's entries, last-first (for ``pop``), a failure code, or None when it is gone."""
    try:
        fd = root.directory(parts)
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) in seen:
            return "directory_cycle"
        seen.add((info.st_dev, info.st_ino))
        entries = _entries(fd)
    except OSError as error:
        if not parts:
            raise
        return None if error.errno in _GONE else "unreadable_directory"
    entries.sort(key=lambda entry: entry[0] + "/" if entry[1] else entry[0], reverse=True)
    return entries


def _entries(fd: int) -> list[tuple[str, bool]]:
    """``(name, is a real directory)`` for the directory's files, directories and symlinks."""
    out: list[tuple[str, bool]] = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    out.append((entry.name, True))
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    out.append((entry.name, False))
            except OSError:
                continue  # removed while listed
    return out

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
from collections.abc import Callable
from dataclasses import dataclass, field

from runiq.rag.sources.confined import ConfinedRoot, Parts

__all__ = ["Listing", "find_files"]

# A directory that became a symlink, a file or nothing since it was listed: it is simply not there.
_GONE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP})


@dataclass(slots=True)
class Listing:
    files: list[Parts] = field(default_factory=list)
    problems: list[tuple[Parts, str]] = field(default_factory=list)  # a directory and a failure code


def find_files(root: ConfinedRoot, matches: Callable[[str], object], *, recursive: bool) -> Listing:
    """Every candidate under the root; ``matches`` answers a truthy value for names to keep."""
    listing = Listing()
    seen: set[tuple[int, int]] = set()
    stack: list[Parts] = [()]
    while stack:
        parts = stack.pop()
        try:
            fd = root.directory(parts)
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) in seen:
                listing.problems.append((parts, "directory_cycle"))
                continue
            seen.add((info.st_dev, info.st_ino))
            entries = _entries(fd)
        except OSError as error:
            if not parts:
                raise
            if error.errno not in _GONE:
                listing.problems.append((parts, "unreadable_directory"))
            continue
        for name, is_directory in entries:
            if is_directory:
                if recursive:
                    stack.append((*parts, name))
            elif matches(name):
                listing.files.append((*parts, name))
    return listing


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

"""Opening directories and files beneath a root directory handle, never outside it.

Each path component is opened relative to the handle of the one before it with ``O_NOFOLLOW``, so a
component swapped for a symlink between a check and a read cannot redirect the read: what is resolved
is what is read. Symlinks met while opening a file are expanded here, one component at a time, under
the same rule: a link that leads above the root raises :class:`OutsideRoot`, more than
``MAX_SYMLINKS`` expansions raise :class:`SymlinkLoop`. An absolute link target counts as inside only
when it starts with the root as configured or as resolved (``/`` components, no ``..`` before the root).

Needs ``dir_fd`` support (POSIX); every handle is closed by :meth:`ConfinedRoot.close`.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from types import TracebackType

__all__ = ["MAX_SYMLINKS", "ConfinedRoot", "OutsideRoot", "Parts", "SymlinkLoop", "supported"]

Parts = tuple[str, ...]

MAX_SYMLINKS = 40  # the kernel's own limit on links followed in one lookup
# Handles kept open between calls: a depth-first walk opens each directory from its parent's handle,
# and reads in path order mostly revisit the last few directories; one reopen per miss costs O(depth).
_CACHED_DIRECTORIES = 32

_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY_FLAGS: int = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
# O_NONBLOCK: opening a FIFO that matched the pattern must not wait for a writer (O_NOCTTY: nor a
# terminal become ours).
_FILE_FLAGS: int = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class OutsideRoot(Exception):
    """The path, once its symlinks are expanded, leads outside the root."""


class SymlinkLoop(Exception):
    """Opening the path needed more than ``MAX_SYMLINKS`` symlink expansions."""


_SUPPORTED = bool(_NOFOLLOW) and os.open in os.supports_dir_fd and os.readlink in os.supports_dir_fd


def supported() -> bool:
    """Whether this platform can open files relative to a directory handle without following links."""
    return _SUPPORTED


class ConfinedRoot:
    """Handles on a root directory and the directories under it."""

    def __init__(self, root: Path) -> None:
        # The root itself may be a symlink (configuration is trusted); nothing below it is followed blindly.
        self._prefixes = {_components(os.fspath(root)), _components(os.path.realpath(root))}
        self._cache: OrderedDict[Parts, int] = OrderedDict()
        self._fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)

    def __enter__(self) -> ConfinedRoot:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._cache.values():
            os.close(fd)
        self._cache.clear()
        os.close(self._fd)

    def directory(self, parts: Parts) -> int:
        """A handle on the directory ``parts``, borrowed: valid until the next call. Every component must
        be a real directory: a symlink raises ``OSError`` (``ENOTDIR`` or ``ELOOP``), a missing one
        ``FileNotFoundError``."""
        fd = self._cache.get(parts)
        if fd is not None:  # the common case: a file's directory, just listed or stamped
            self._cache.move_to_end(parts)
            return fd
        depth = len(parts)
        while depth and parts[:depth] not in self._cache:
            depth -= 1
        fd = self._cached(parts[:depth])
        for index in range(depth, len(parts)):
            fd = os.open(parts[index], _DIRECTORY_FLAGS, dir_fd=fd)
            self._remember(parts[: index + 1], fd)
        return fd

    def open_file(self, parts: Parts) -> int:
        """An owned read-only handle on ``parts`` (it may be a directory or a FIFO: check with fstat).
        Symlinks on the way are expanded within the root; see the module docstring for the errors."""
        try:
            return os.open(parts[-1], _FILE_FLAGS, dir_fd=self.directory(parts[:-1]))
        except OSError:
            pass
        # A link (the file itself, or a directory swapped for one since the walk): expand it safely.
        return self._resolve(parts)

    def _cached(self, parts: Parts) -> int:
        if not parts:
            return self._fd
        self._cache.move_to_end(parts)
        return self._cache[parts]

    def _remember(self, parts: Parts, fd: int) -> None:
        self._cache[parts] = fd
        if len(self._cache) > _CACHED_DIRECTORIES:
            os.close(self._cache.popitem(last=False)[1])

    def _resolve(self, parts: Parts) -> int:
        """Open ``parts`` from the root, one component at a time, expanding symlinks within the root."""
        todo, hops, current = list(reversed(parts)), 0, self._fd
        names: list[str] = []  # where ``current`` is, for '..'
        try:
            while todo:
                name = todo.pop()
                if name in ("", "."):
                    continue
                if name == "..":
                    if not names:
                        raise OutsideRoot
                    names.pop()
                    todo.extend(reversed(names))  # reopen the parent from the root: no '..' on a handle
                    names, current = [], self._release(current)
                    continue
                step = _step(name, current, last=not todo)
                if isinstance(step, int):
                    self._release(current)
                    current = step
                    names.append(name)
                    continue
                hops += 1
                if hops > MAX_SYMLINKS:
                    raise SymlinkLoop
                if step.startswith("/"):
                    todo.extend(reversed(self._beneath(step)))
                    names, current = [], self._release(current)
                else:
                    todo.extend(reversed(step.split("/")))
            return current if current != self._fd else os.dup(self._fd)
        except BaseException:
            self._release(current)
            raise

    def _release(self, fd: int) -> int:
        """Close a handle ``_resolve`` owns (never the root's); answers the root handle."""
        if fd != self._fd:
            os.close(fd)
        return self._fd

    def _beneath(self, target: str) -> list[str]:
        components = _components(target)
        for prefix in self._prefixes:
            if components[: len(prefix)] == prefix:
                return list(components[len(prefix) :])
        raise OutsideRoot


def _components(path: str) -> Parts:
    return tuple(part for part in path.split("/") if part not in ("", "."))


def _step(name: str, dir_fd: int, *, last: bool) -> int | str:
    """Open one component without following it; a symlink answers its target instead of a handle."""
    try:
        return os.open(name, _FILE_FLAGS if last else _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        try:
            return os.readlink(name, dir_fd=dir_fd)
        except OSError:
            raise error from None

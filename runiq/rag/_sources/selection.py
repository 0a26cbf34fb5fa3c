"""Which files a directory source reads, and with which loader.

The default pattern (``*``) selects what the loader registry reads, by file extension: every other
file is skipped and counted as skipped, never failed, so a folder of mixed files (images, archives,
executables beside the documents) ingests cleanly. Any other pattern is the operator naming files:
each matching file is read by its format's loader, or as plain text when no loader claims its
extension (``*.log``, ``*.rst``), as a directory source did before loaders existed. Text detection
then fails a binary file as ``undecodable``.
"""

from __future__ import annotations

import fnmatch
import re

from runiq.rag._loaders.registry import LoaderRegistry, LoaderSpec
from runiq.rag._loaders.text import PlainTextLoader

__all__ = ["DEFAULT_PATTERN", "FileSelection"]

DEFAULT_PATTERN = "*"

_AS_TEXT = LoaderSpec(PlainTextLoader(), "runiq", isolated=False)
_REMEMBERED = 4096  # suffix chains remembered per selection


class FileSelection:
    """``matches(name)``: is the file a candidate at all; ``loader_for(name)``: the loader that reads a
    candidate, or None to skip it."""

    def __init__(self, registry: LoaderRegistry, pattern: str = DEFAULT_PATTERN) -> None:
        self._registry = registry
        self._default = pattern == DEFAULT_PATTERN
        self._match = re.compile(fnmatch.translate(pattern)).fullmatch
        self._by_suffixes: dict[str, LoaderSpec | None] = {}

    def matches(self, name: str) -> bool:
        return self._default or self._match(name) is not None

    def loader_for(self, name: str) -> LoaderSpec | None:
        """Remembered per suffix chain (what the registry resolves a name by): a tree of 100,000 files
        has a handful, and resolving each name through ``PurePath`` cost more than a ``stat``."""
        key = _suffixes(name)
        try:
            return self._by_suffixes[key]
        except KeyError:
            pass
        spec = self._registry.spec_for_path(name)
        if spec is None and not self._default:
            spec = _AS_TEXT
        if len(self._by_suffixes) >= _REMEMBERED:
            self._by_suffixes.clear()  # names with many distinct dotted parts: stay bounded
        self._by_suffixes[key] = spec
        return spec


def _suffixes(name: str) -> str:
    """The lower-cased suffix chain of a file name, as ``PurePath(name.lower()).suffixes`` joined."""
    if name.endswith("."):
        return ""
    stripped = name.lstrip(".")
    dot = stripped.find(".")
    return "" if dot < 0 else stripped[dot:].lower()

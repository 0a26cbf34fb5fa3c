"""runiq: retrieval-augmented generation for Python hosts."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("runiq")
except PackageNotFoundError:  # pragma: no cover - only when run from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]

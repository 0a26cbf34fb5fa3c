"""Parser libraries a loader imports when it first loads a file, not when it is registered.

Registering a loader imports its module in the host process, which needs only the loader's name,
extensions and media types: ``runiq status`` should not pay for pypdf or openpyxl (0.1-0.25 s of CPU
each). So a loader module imports its parser inside its functions and names it with
:func:`import_when_loading`. The loader worker imports the named libraries once, after it has
unpickled a request (which imports the loader's module) and before it forks the child that loads the
file (:func:`import_deferred`), so no file pays for the import either.
"""

from __future__ import annotations

import contextlib
import importlib

__all__ = ["import_deferred", "import_when_loading"]

_pending: list[str] = []


def import_when_loading(*modules: str) -> None:
    """Name the modules this loader module imports inside its functions (call it at module level)."""
    _pending.extend(module for module in modules if module not in _pending)


def import_deferred() -> None:
    """Import every named module not imported yet (the loader worker, before it forks).

    A module that fails to import is left to the loader: its own import then fails the file, as a
    missing parser would have failed it in the child."""
    while _pending:
        module = _pending.pop(0)
        with contextlib.suppress(Exception):
            importlib.import_module(module)

"""Lazy re-exports (PEP 562) for the faces ``runiq.rag`` and ``runiq.rag.providers``, and for private
packages that re-export a name whose module is costly to import (numpy, the BM25 engine).

A module lists its names in ``__all__`` and imports the lazy ones under ``if _TYPE_CHECKING:`` (or
``if TYPE_CHECKING:``). Type checkers
read those imports; at run time they are parsed once to learn which module defines each name, and
that module is imported when the name is first looked up. So importing a face costs nothing until a
name is used (``from runiq.rag.providers import hookimpl`` does not load the RAG core).
"""

from __future__ import annotations

import ast
import importlib
import pathlib
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from typing import Any

__all__ = ["lazy_face"]

_GUARDS = ("_TYPE_CHECKING", "TYPE_CHECKING")


def _origins(face_file: str) -> dict[str, str]:
    """Name -> defining module, read from the module's ``if _TYPE_CHECKING:`` imports."""
    tree = ast.parse(pathlib.Path(face_file).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) in _GUARDS)
    return {
        alias.asname or alias.name: statement.module
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module is not None
        for alias in statement.names
    }


def _load(module: str, name: str) -> object:
    defining = importlib.import_module(module)
    try:
        return getattr(defining, name)
    except AttributeError:  # a submodule re-exported by name (``scoring``)
        return importlib.import_module(f"{module}.{name}")


def lazy_face(
    face: str, face_file: str, names: Sequence[str], namespace: dict[str, Any], *, submodules: bool = False
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the face module ``face``; ``submodules`` also resolves its packages."""
    origins: dict[str, str] = {}

    def __getattr__(name: str) -> object:
        if not origins:
            origins.update(_origins(face_file))
        module = origins.get(name)
        if module is not None:
            value = _load(module, name)
            namespace[name] = value  # later lookups skip __getattr__
            return value
        if submodules and find_spec(f"{face}.{name}") is not None:
            return importlib.import_module(f"{face}.{name}")
        raise AttributeError(f"module {face!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__

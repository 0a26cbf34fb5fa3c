"""Package names that load their defining module on first use (PEP 562).

A package re-exports a name whose module imports something costly (numpy, a provider SDK) without
importing that module until the name is looked up, so importing the package for its light names (a
plugin's registration, ``runiq status``) does not pay for it. Type checkers read the same names from
an ``if TYPE_CHECKING:`` import in the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(package: str, origins: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``origins`` is imported from the module
    it maps to when first looked up, then kept in the package (later lookups skip ``__getattr__``).

    Use: ``if not TYPE_CHECKING: __getattr__, __dir__ = lazy_names(__name__, {"BM25Index": "...engine"})``.
    """

    def __getattr__(name: str) -> object:
        origin = origins.get(name)
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(origins))

    return __getattr__, __dir__

"""The loaders the core ships: formats that need no heavy dependency. PDF and Office formats come
from the ``runiq-documents`` plugin distribution."""

from __future__ import annotations

from runiq.hosting.builder import BUILTINS_NAME
from runiq.rag._loaders.base import DocumentLoader
from runiq.rag._loaders.csv_loader import CsvLoader, TsvLoader
from runiq.rag._loaders.html_loader import HtmlLoader
from runiq.rag._loaders.json_loader import JsonLoader
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag._loaders.text import MarkdownLoader, PlainTextLoader

__all__ = ["BUILTIN_LOADERS", "builtin_registry", "register_builtin_loaders"]

BUILTIN_LOADERS: tuple[DocumentLoader, ...] = (
    PlainTextLoader(),
    MarkdownLoader(),
    JsonLoader(),
    CsvLoader(),
    TsvLoader(),
    HtmlLoader(),
)


# Linear parses that never inflate their input run in a thread (a fork per file costs more than they
# do); HTML goes through a full parser and tree walk, so it stays isolated like every plugin loader.
_IN_THREAD = frozenset({"text", "markdown", "json", "csv", "tsv"})


def register_builtin_loaders(registry: LoaderRegistry) -> None:
    for loader in BUILTIN_LOADERS:
        registry.add(loader, isolated=loader.name not in _IN_THREAD)


def builtin_registry() -> LoaderRegistry:
    """A registry of the built-in loaders only: what a directory source reads when it is given none."""
    registry = LoaderRegistry()
    registry.set_current_plugin(BUILTINS_NAME)  # the name the plugin host gives the built-in providers
    register_builtin_loaders(registry)
    return registry

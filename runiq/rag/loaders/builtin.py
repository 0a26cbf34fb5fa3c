"""The loaders the core ships: formats that need no heavy dependency. PDF and Office formats come
from the ``runiq-documents`` plugin distribution."""

from __future__ import annotations

from runiq.rag.loaders.base import DocumentLoader
from runiq.rag.loaders.csv_loader import CsvLoader, TsvLoader
from runiq.rag.loaders.html_loader import HtmlLoader
from runiq.rag.loaders.json_loader import JsonLoader
from runiq.rag.loaders.registry import LoaderRegistry
from runiq.rag.loaders.text import MarkdownLoader, PlainTextLoader

__all__ = ["BUILTIN_LOADERS", "register_builtin_loaders"]

BUILTIN_LOADERS: tuple[DocumentLoader, ...] = (
    PlainTextLoader(),
    MarkdownLoader(),
    JsonLoader(),
    CsvLoader(),
    TsvLoader(),
    HtmlLoader(),
)


def register_builtin_loaders(registry: LoaderRegistry) -> None:
    for loader in BUILTIN_LOADERS:
        registry.add(loader)

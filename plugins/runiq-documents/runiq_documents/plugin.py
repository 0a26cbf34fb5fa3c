"""The ``runiq`` entry point: registers the PDF, DOCX, PPTX and XLSX loaders."""

from __future__ import annotations

from runiq.rag.providers import LoaderRegistry, hookimpl
from runiq_documents.pdf import PdfLoader
from runiq_documents.sheets import XlsxLoader
from runiq_documents.slides import PptxLoader
from runiq_documents.word import DocxLoader

__all__ = ["LOADERS", "runiq_register_loaders"]

LOADERS = (PdfLoader(), DocxLoader(), PptxLoader(), XlsxLoader())


@hookimpl
def runiq_register_loaders(registry: LoaderRegistry) -> None:
    for loader in LOADERS:
        registry.add(loader)

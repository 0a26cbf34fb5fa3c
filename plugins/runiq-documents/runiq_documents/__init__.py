"""runiq-documents: PDF, DOCX, PPTX and XLSX loaders for runiq, registered through ``runiq_register_loaders``."""

from __future__ import annotations

from runiq_documents.pdf import PdfLoader
from runiq_documents.sheets import XlsxLoader
from runiq_documents.slides import PptxLoader
from runiq_documents.word import DocxLoader

__all__ = ["DocxLoader", "PdfLoader", "PptxLoader", "XlsxLoader"]

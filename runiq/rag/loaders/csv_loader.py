"""CSV and TSV: the first row names the columns, every other row becomes one line of readable text."""

from __future__ import annotations

import csv
import io

from runiq.rag.documents import MetadataValue
from runiq.rag.loaders.base import LoadedDocument, LoadOptions, guarded
from runiq.rag.loaders.encoding import decode_text
from runiq.rag.loaders.errors import LoadFailureCode
from runiq.rag.loaders.tabular import cell_text, row_text

__all__ = ["CsvLoader", "TsvLoader"]

_SNIFF_CHARACTERS = 16 * 1024  # the sniffer is regex-based: a bounded sample keeps it fast
_DELIMITERS = ",;\t|"


class CsvLoader:
    """Comma, semicolon, tab or pipe separated, detected from the first lines (comma if unsure)."""

    name = "csv"
    extensions = frozenset({".csv"})
    media_types = frozenset({"text/csv"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        rows = guarded(lambda: _rows(text, self._dialect(text)), {csv.Error: LoadFailureCode.MALFORMED})
        return _render(rows, encoding)

    def _dialect(self, text: str) -> type[csv.Dialect] | csv.Dialect:
        try:
            sample = text[:_SNIFF_CHARACTERS]
            return csv.Sniffer().sniff(sample.rsplit("\n", 1)[0] if "\n" in sample else sample, delimiters=_DELIMITERS)
        except csv.Error:
            return csv.excel


class TsvLoader(CsvLoader):
    name = "tsv"
    extensions = frozenset({".tsv"})
    media_types = frozenset({"text/tab-separated-values"})

    def _dialect(self, text: str) -> type[csv.Dialect] | csv.Dialect:
        return csv.excel_tab


def _rows(text: str, dialect: type[csv.Dialect] | csv.Dialect) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(text, newline=""), dialect) if any(cell.strip() for cell in row)]


def _render(rows: list[list[str]], encoding: str) -> LoadedDocument:
    if len(rows) == 1:
        lines = ["; ".join(text for cell in rows[0] if (text := cell_text(cell)))]
    else:
        headers = [cell_text(cell) for cell in rows[0]] if rows else []
        lines = [row_text(headers, row) for row in rows[1:]]
    metadata: dict[str, MetadataValue] = {"encoding": encoding, "row_count": max(len(rows) - 1, 0)}
    return LoadedDocument(text="\n".join(line for line in lines if line), metadata=metadata)

"""CSV and TSV: the first row names the columns, every other row becomes one line of readable text."""

from __future__ import annotations

import csv
import io

from runiq.rag._documents import MetadataValue
from runiq.rag._loaders.base import LoadedDocument, LoadOptions, guarded, parser_failures
from runiq.rag._loaders.encoding import decode_text
from runiq.rag._loaders.errors import LoadFailureCode
from runiq.rag._loaders.tabular import table_lines

__all__ = ["CsvLoader", "TsvLoader"]

_SNIFF_CHARACTERS = 16 * 1024  # the sniffer is regex-based: a bounded sample keeps it fast
_DELIMITERS = ",;\t|"
_FAILURES = parser_failures({csv.Error: LoadFailureCode.MALFORMED})


class CsvLoader:
    """Comma, semicolon, tab or pipe separated, detected from the first lines (comma if unsure)."""

    name = "csv"
    extensions = frozenset({".csv"})
    media_types = frozenset({"text/csv"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        rows = guarded(lambda: _rows(text, self._dialect(text)), _FAILURES)
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
    metadata: dict[str, MetadataValue] = {"encoding": encoding, "row_count": max(len(rows) - 1, 0)}
    return LoadedDocument(text="\n".join(table_lines(rows)), metadata=metadata)

"""XLSX: each sheet a heading (its name, so chunks get it as their ``section``), each row one line of
``Column: value`` pairs named by the sheet's first row (openpyxl, MIT, read-only and cached values:
no formula is evaluated). openpyxl parses through defusedxml when it is installed (a dependency of
this distribution), and :func:`runiq.rag._loaders.open_zip` checks the package first.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import defusedxml  # noqa: F401 - imported so a missing install fails here: openpyxl only uses it when present

from runiq.rag.providers import (
    LoadedDocument,
    LoadOptions,
    MarkdownBuilder,
    MetadataValue,
    guarded,
    import_when_loading,
    one_line,
    open_zip,
    parser_failures,
    table_lines,
)

__all__ = ["XlsxLoader"]

_FAILURES = parser_failures()
import_when_loading("openpyxl")


@dataclass(frozen=True, slots=True)
class XlsxLoader:
    name: str = "xlsx"
    extensions: frozenset[str] = frozenset({".xlsx", ".xlsm"})
    media_types: frozenset[str] = frozenset(
        {
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "application/vnd.ms-excel.sheet.macroenabled.12",
        }
    )

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        open_zip(data, options)
        return guarded(lambda: _load(data), _FAILURES)


def _load(data: bytes) -> LoadedDocument:
    import openpyxl

    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    try:
        builder = MarkdownBuilder()
        for sheet in workbook.worksheets:
            builder.heading(sheet.title, 1)
            builder.paragraph("\n".join(table_lines(list(sheet.iter_rows(values_only=True)))))
        return builder.build(title=_title(workbook), metadata=_metadata(workbook))
    finally:
        workbook.close()


def _title(workbook: Any) -> str | None:
    return one_line(workbook.properties.title or "") or None


def _metadata(workbook: Any) -> dict[str, MetadataValue]:
    metadata: dict[str, MetadataValue] = {"sheet_count": len(workbook.worksheets)}
    if workbook.properties.creator and one_line(workbook.properties.creator):
        metadata["author"] = one_line(workbook.properties.creator)
    return metadata

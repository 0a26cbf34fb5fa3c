"""Rows as readable text, one rule for CSV and spreadsheets: ``Name: Alice; Role: Engineer``.

A dump of cells loses which value belongs to which column; a line per row that names each column
keeps a row retrievable on its own, whatever chunk it lands in. Empty cells are left out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from runiq.rag._loaders.builder import one_line

__all__ = ["cell_text", "row_text", "table_lines"]


def cell_text(value: object) -> str:
    """One cell as text: integral floats without ``.0``, dates in ISO form, whitespace on one line."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return one_line(str(value))


def row_text(headers: Sequence[str], values: Sequence[object]) -> str:
    """``"Header: value; ..."``; a column without a header is named by its 1-based position."""
    parts = []
    for index, value in enumerate(values):
        text = cell_text(value)
        if text:
            header = headers[index] if index < len(headers) and headers[index] else f"Column {index + 1}"
            parts.append(f"{header}: {text}")
    return "; ".join(parts)


def table_lines(rows: Sequence[Sequence[object]]) -> list[str]:
    """A table as readable lines: the first row with a value names the columns, every later one is a
    :func:`row_text` line; a table of one row is that row's values. Rows without a value are skipped."""
    kept = [row for row in rows if any(cell_text(cell) for cell in row)]
    if len(kept) == 1:
        return ["; ".join(text for cell in kept[0] if (text := cell_text(cell)))]
    headers = [cell_text(cell) for cell in kept[0]] if kept else []
    return [row_text(headers, row) for row in kept[1:]]

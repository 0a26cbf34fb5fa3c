"""Running the store's precomputed search statements, plain or filtered, and reading what they return.

Each search statement has a plain form and, for a metadata filter, a
:class:`~runiq_postgresql.queries.FilteredStatement` whose filter parameters follow the statement's own.
The vector search (``store``) and the lexical reads (``lexical_reads``) both run them through here.
"""

from __future__ import annotations

import json
from typing import Any

from runiq.rag.providers import FilterNode
from runiq_postgresql.connection import Connection
from runiq_postgresql.queries import FilteredStatement

__all__ = ["chunk_metadata", "fetch", "statement"]


def statement(
    plain: str, filtered: FilteredStatement | None, where: FilterNode | None
) -> tuple[str, tuple[object, ...]]:
    """The precomputed statement without a filter, else the statement for the filter's shape and its
    parameters (to pass after the statement's own)."""
    if where is None:
        return plain, ()
    assert filtered is not None  # every statement that has a plain form has a filtered one
    return filtered.bind(where)


async def fetch(
    conn: Connection, plain: str, filtered: FilteredStatement | None, where: FilterNode | None, *args: object
) -> list[Any]:
    sql, filter_args = statement(plain, filtered, where)
    return list(await conn.fetch(sql, *args, *filter_args))


def chunk_metadata(text: str) -> dict[str, Any]:
    return {} if text == "{}" else json.loads(text)  # most chunks carry no metadata

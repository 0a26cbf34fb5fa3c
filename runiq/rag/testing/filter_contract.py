"""``MetadataFilterContract``: the filter language (:mod:`runiq.rag._stores.filters`) in a store.

Every operator, list-valued metadata, typed dates, ``$and``/``$or``/``$not``, a retrieval scope that
no ``$or`` widens, and hostile filters rejected before any backend work, each checked against the
expected rows and against the reference evaluation
(:func:`~runiq.rag._stores.filters.matches`). Lexical search, when the store offers it, must filter
the same way. The rows and cases are :mod:`runiq.rag.testing.filter_cases`.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from runiq.errors import RagValidationError
from runiq.rag._documents import RagChunk, chunk_id_for
from runiq.rag._lexical.query import parse_lexical_query
from runiq.rag._retrieval.scope import ScopeConflict, merge_scope
from runiq.rag._stores.base import IndexSpec, LexicalSearch, StoredDocument, VectorStore
from runiq.rag._stores.filters import MAX_FILTER_DEPTH, MAX_FILTER_IN_VALUES, matches, parse_filter
from runiq.rag.testing.fakes import CANARY
from runiq.rag.testing.filter_cases import FILTER_CASES, FILTER_ROWS, HOSTILE_FILTERS, deep_filter, random_filter

__all__ = ["MetadataFilterContract"]

_QUERY = np.array([1, 0, 0], dtype=np.float32)
_TEXT = "remote work policy"


def _ids(indices: object) -> list[str]:
    return [f"d#{i}" for i in sorted(indices)]  # type: ignore[call-overload]


class MetadataFilterContract:
    """Override the ``store`` fixture to yield a fresh, open store."""

    @pytest.fixture
    async def store(self) -> AsyncIterator[VectorStore]:
        raise NotImplementedError("override the 'store' fixture")
        yield  # pragma: no cover  # noqa: PT022

    @pytest.fixture
    async def rows_index(self, store: VectorStore) -> str:
        """One document whose chunk ``d#i`` carries ``FILTER_ROWS[i]``; all chunks share one vector."""
        return await self._index(store, FILTER_ROWS)

    async def _index(self, store: VectorStore, rows: tuple[dict[str, Any], ...]) -> str:
        name = f"filters-{uuid.uuid4().hex[:12]}"
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
        chunks = [
            RagChunk(
                document_id="d",
                chunk_id=chunk_id_for("d", i),
                ordinal=i,
                content=_TEXT,
                start=0,
                end=len(_TEXT),
                metadata=metadata,
            )
            for i, metadata in enumerate(rows)
        ]
        vectors = np.tile(_QUERY, (len(chunks), 1))
        await store.replace_document(name, StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
        return name

    async def _matching(self, store: VectorStore, name: str, filters: Any) -> list[str]:
        hits = await store.search(name, _QUERY, top_k=100, filters=filters)
        return sorted(hit.chunk_id for hit in hits)

    @pytest.mark.parametrize(("filters", "expected"), [pytest.param(f, e, id=i) for i, f, e in FILTER_CASES])
    async def test_each_operator_matches_the_documented_rows(
        self, store: VectorStore, rows_index: str, filters: dict[str, Any], expected: tuple[int, ...]
    ) -> None:
        """Equality, ranges, $in/$nin/$exists, $and/$or/$not, lists, dates and datetimes, row by row."""
        node = parse_filter(filters)
        assert node is not None
        assert _ids(i for i, row in enumerate(FILTER_ROWS) if matches(node, row)) == _ids(expected)
        assert await self._matching(store, rows_index, filters) == _ids(expected)

    async def test_random_filters_agree_with_the_reference(self, store: VectorStore, rows_index: str) -> None:
        """300 drawn filters (nested, every operator and operand kind) select what ``matches`` selects."""
        rng = random.Random(29)  # noqa: S311 - reproducible test data
        for _ in range(300):
            filters = random_filter(rng)
            node = parse_filter(filters)
            assert node is not None
            expected = _ids(i for i, row in enumerate(FILTER_ROWS) if matches(node, row))
            assert await self._matching(store, rows_index, filters) == expected, filters

    async def test_filters_apply_before_top_k(self, store: VectorStore) -> None:
        """The nearest chunk fails the range, so top_k=1 returns the nearest of the rest."""
        name = f"filters-{uuid.uuid4().hex[:12]}"
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
        chunks = [
            RagChunk(document_id="d", chunk_id=chunk_id_for("d", i), ordinal=i, content="x", start=0, end=1,
                     metadata={"year": year})
            for i, year in enumerate((2019, 2024, 2025))
        ]  # fmt: skip
        vectors = np.asarray([[1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0]], dtype=np.float32)
        await store.replace_document(name, StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
        hits = await store.search(name, _QUERY, top_k=1, filters={"year": {"$gte": 2020}})
        assert [hit.chunk_id for hit in hits] == ["d#1"]

    async def test_list_valued_metadata_round_trips(self, store: VectorStore) -> None:
        """A list comes back with its elements in order and their types kept (a tuple or a list)."""
        name = await self._index(store, ({"tags": ("a", 3, 2.5, True), "empty": ()},))
        hits = await store.search(name, _QUERY, top_k=1, filters={"tags": 2.5})
        assert [tuple(hit.metadata["tags"]) for hit in hits] == [("a", 3, 2.5, True)]  # type: ignore[arg-type]
        assert [type(v) for v in hits[0].metadata["tags"]] == [str, int, float, bool]  # type: ignore[union-attr]
        assert tuple(hits[0].metadata["empty"]) == ()  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "query_filter",
        [
            pytest.param({"$or": [{"tenant": "b"}, {"tenant": {"$exists": True}}]}, id="or-widening"),
            pytest.param({"$or": [{"x": 1}, {"$not": {"x": 1}}]}, id="or-tautology"),
            pytest.param({"$not": {"tenant": "a"}}, id="not-the-scope"),
            pytest.param({"tenant": {"$in": ["a", "b"]}}, id="in-both-tenants"),
            pytest.param({"tenant": {"$ne": "a"}}, id="ne-the-scope"),
            pytest.param({"tenant": {"$exists": True}}, id="exists"),
            pytest.param({"$and": [{"tenant": "b"}]}, id="and-other-tenant"),
            pytest.param({"tenant": "b"}, id="plain-other-tenant"),
        ],
    )
    async def test_the_scope_is_a_conjunct_no_or_can_widen(self, store: VectorStore, query_filter: Any) -> None:
        """``merge_scope`` keeps the scope a conjunct of its own: whatever the query says, only the scope's rows."""
        name = await self._index(store, ({"tenant": "a", "x": 1}, {"tenant": "b", "x": 1}, {"tenant": "b"}, {}))
        try:
            merged = merge_scope(query_filter, {"tenant": "a"})
        except ScopeConflict:
            return  # the retriever answers a contradiction with no hits
        assert set(await self._matching(store, name, merged)) <= {"d#0"}

    @pytest.mark.parametrize("filters", [pytest.param(f, id=i) for i, f in HOSTILE_FILTERS])
    async def test_hostile_filters_are_validation_errors(
        self, store: VectorStore, rows_index: str, filters: Any
    ) -> None:
        """Rejected up front with a fixed message that quotes neither key nor value, and nothing chained."""
        started = time.perf_counter()
        with pytest.raises(RagValidationError, match=r"^Filter") as caught:
            await self._matching(store, rows_index, filters)
        assert time.perf_counter() - started < 5.0  # rejected before any work; generous for a loaded machine
        assert CANARY not in str(caught.value)
        assert "\x00" not in str(caught.value)
        assert caught.value.__cause__ is None
        assert caught.value.__context__ is None

    async def test_the_limits_themselves_are_accepted(self, store: VectorStore, rows_index: str) -> None:
        """Exactly ``MAX_FILTER_DEPTH`` levels and ``MAX_FILTER_IN_VALUES`` values work."""
        deepest = deep_filter(MAX_FILTER_DEPTH)  # $not seven times: an odd count, so "not team hr"
        assert await self._matching(store, rows_index, deepest) == _ids((1, 2, 3, 5, 7))
        many = {"team": {"$in": ["hr", *(f"t{i}" for i in range(MAX_FILTER_IN_VALUES - 1))]}}
        assert await self._matching(store, rows_index, many) == _ids((0, 4, 6))

    async def test_lexical_search_filters_the_same_way(self, store: VectorStore, rows_index: str) -> None:
        """A store with lexical search applies the same language there (each case, and the hostile ones)."""
        if not isinstance(store, LexicalSearch):
            pytest.skip("this store offers no lexical search")  # a capability, not a requirement
        query = parse_lexical_query("policy")
        for _, filters, expected in FILTER_CASES:
            hits = await store.lexical_search(rows_index, query, top_k=100, filters=filters)
            assert sorted(hit.chunk_id for hit in hits) == _ids(expected), filters
        for _, filters in HOSTILE_FILTERS[:4]:
            with pytest.raises(RagValidationError, match=r"^Filter"):
                await store.lexical_search(rows_index, query, top_k=5, filters=filters)

"""Contract suites every store and embedding client must pass (the in-memory ones do too)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from runiq.errors import (
    RagValidationError,
    SchemaMismatchError,
    VectorDimensionMismatchError,
    VectorIndexNotFoundError,
)
from runiq.rag._embeddings.base import EmbeddingClient, EmbeddingInputKind
from runiq.rag._limits import MAX_CANDIDATES
from runiq.rag._stores.base import (
    BulkDocumentWriter,
    DistanceMetric,
    DocumentCounter,
    DocumentStamps,
    DocumentWrite,
    HealthCheck,
    IndexSpec,
    StoredDocument,
    StoreHealth,
    VectorStore,
)
from runiq.rag.testing._builders import index_name as _name
from runiq.rag.testing._builders import stored_document as _doc
from runiq.rag.testing._builders import text_chunk as _chunk
from runiq.rag.testing._builders import vectors as _vectors
from runiq.rag.testing.lexical_contract import LexicalSearchContract  # defined there; importable from here too

__all__ = ["EmbeddingClientContract", "LexicalSearchContract", "VectorStoreContract"]


class VectorStoreContract:
    """Override the ``store`` fixture to yield a fresh, open store."""

    @pytest.fixture
    async def store(self) -> AsyncIterator[VectorStore]:
        raise NotImplementedError("override the 'store' fixture")
        yield  # pragma: no cover

    async def _index(self, store: VectorStore, metric: DistanceMetric = DistanceMetric.COSINE, dims: int = 3) -> str:
        name = _name()
        await store.ensure_index(IndexSpec(name=name, dimensions=dims, metric=metric, embedding_model="contract-model"))
        return name

    async def test_ensure_index_is_idempotent_and_refuses_other_dimensions(self, store: VectorStore) -> None:
        """The same spec twice is fine; another dimension or model is a SchemaMismatchError."""
        name = await self._index(store)
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
        with pytest.raises(SchemaMismatchError):
            await store.ensure_index(IndexSpec(name=name, dimensions=4, embedding_model="contract-model"))
        with pytest.raises(SchemaMismatchError):
            await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="other-model"))

    async def test_cosine_scores_follow_the_documented_semantics(self, store: VectorStore) -> None:
        """Cosine: identical -> raw 1, relevance 1; orthogonal -> raw 0, relevance 0.5; higher is better."""
        name = await self._index(store)
        await store.replace_document(
            name, _doc("d1"), [_chunk("d1", 0, "same"), _chunk("d1", 1, "orthogonal")], _vectors([1, 0, 0], [0, 1, 0])
        )
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=5)
        assert [h.chunk_id for h in hits] == ["d1#0", "d1#1"]
        assert hits[0].raw_score == pytest.approx(1.0, abs=1e-6)
        assert hits[0].relevance == pytest.approx(1.0, abs=1e-6)
        assert hits[1].raw_score == pytest.approx(0.0, abs=1e-6)
        assert hits[1].relevance == pytest.approx(0.5, abs=1e-6)
        assert all(h.higher_is_better and h.metric == "cosine-similarity" for h in hits)

    async def test_euclidean_is_lower_is_better_with_inverse_relevance(self, store: VectorStore) -> None:
        """Euclidean: raw is the distance, nearer first, relevance 1 / (1 + raw)."""
        name = await self._index(store, DistanceMetric.EUCLIDEAN)
        await store.replace_document(
            name, _doc("d1"), [_chunk("d1", 0, "near"), _chunk("d1", 1, "far")], _vectors([1, 0, 0], [4, 0, 0])
        )
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=5)
        assert [h.chunk_id for h in hits] == ["d1#0", "d1#1"]
        assert hits[0].raw_score == pytest.approx(0.0, abs=1e-6)
        assert hits[1].raw_score == pytest.approx(3.0, abs=1e-5)
        assert hits[1].relevance == pytest.approx(0.25, abs=1e-6)
        assert not hits[0].higher_is_better and hits[0].metric == "euclidean-distance"

    async def test_dot_product_reports_raw_score_without_relevance(self, store: VectorStore) -> None:
        """Dot product is unbounded: raw higher-is-better score, relevance None."""
        name = await self._index(store, DistanceMetric.DOT_PRODUCT)
        await store.replace_document(name, _doc("d1"), [_chunk("d1", 0, "x")], _vectors([2, 0, 0]))
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=5)
        assert hits[0].raw_score == pytest.approx(2.0)
        assert hits[0].relevance is None
        assert hits[0].higher_is_better and hits[0].metric == "dot-product"

    async def test_replace_document_replaces_the_whole_chunk_set(self, store: VectorStore) -> None:
        """After a replace, only the new chunks exist; a shorter version drops the stale ids."""
        name = await self._index(store)
        await store.replace_document(
            name, _doc("d1"), [_chunk("d1", 0, "a"), _chunk("d1", 1, "b")], _vectors([1, 0, 0], [0, 1, 0])
        )
        await store.replace_document(name, _doc("d1", "h2"), [_chunk("d1", 0, "c")], _vectors([0, 0, 1]))
        hits = await store.search(name, np.array([0, 1, 0], dtype=np.float32), top_k=10)
        assert [(h.chunk_id, h.content) for h in hits] == [("d1#0", "c")]
        assert await store.count(name) == 1
        assert dict(await store.document_hashes(name)) == {"d1": "h2"}

    async def test_delete_documents_removes_chunks_and_reports_existing(self, store: VectorStore) -> None:
        """Deleting returns how many documents existed; their chunks are gone."""
        name = await self._index(store)
        await store.replace_document(name, _doc("d1"), [_chunk("d1", 0, "a")], _vectors([1, 0, 0]))
        await store.replace_document(name, _doc("d2"), [_chunk("d2", 0, "b")], _vectors([0, 1, 0]))
        assert await store.delete_documents(name, ["d1", "missing"]) == 1
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=10)
        assert [h.document_id for h in hits] == ["d2"]
        assert set(await store.document_hashes(name)) == {"d2"}

    async def test_document_hashes_of_a_window_and_id_pages(self, store: VectorStore) -> None:
        """Ingestion asks hashes a window at a time and pages through every id once, in the store's order."""
        name = await self._index(store)
        ids = ["b", "a", "a/b", "a.b", "é", "z", "A"]
        for i, doc_id in enumerate(ids):
            await store.replace_document(name, _doc(doc_id, f"h{i}"), [_chunk(doc_id, 0, "x")], _vectors([1, 0, 0]))
        assert dict(await store.document_hashes(name, ["a", "missing", "é"])) == {"a": "h1", "é": "h4"}
        assert dict(await store.document_hashes(name, [])) == {}
        pages: list[str] = []
        after: str | None = None
        while page := list(await store.document_id_page(name, after=after, limit=3)):
            assert len(page) <= 3
            pages.extend(page)
            after = page[-1]
        assert sorted(pages) == sorted(ids) and len(pages) == len(ids)
        assert list(await store.document_id_page(_name("missing"), after=None, limit=3)) == []

    async def test_bulk_replace_is_all_or_nothing(self, store: VectorStore) -> None:
        """A store offering ``replace_documents`` writes a batch whole, or nothing of it."""
        if not isinstance(store, BulkDocumentWriter):
            pytest.skip("this store offers no bulk writes")  # a capability, not a requirement
        name = await self._index(store)
        await store.replace_document(name, _doc("d1"), [_chunk("d1", 0, "old")], _vectors([1, 0, 0]))
        good = DocumentWrite(_doc("d1", "h2"), [_chunk("d1", 0, "new")], _vectors([0, 1, 0]))
        bad = DocumentWrite(_doc("d2"), [_chunk("d2", 0, "x")], _vectors([0, 1]))  # wrong dimension
        with pytest.raises(VectorDimensionMismatchError):
            await store.replace_documents(name, [good, bad])
        assert dict(await store.document_hashes(name)) == {"d1": "h1"}
        with pytest.raises(RagValidationError):
            await store.replace_documents(name, [good, good])
        second = DocumentWrite(_doc("d2"), [_chunk("d2", 0, "b"), _chunk("d2", 1, "c")], _vectors([0, 0, 1], [1, 1, 0]))
        await store.replace_documents(name, [good, second])
        assert dict(await store.document_hashes(name)) == {"d1": "h2", "d2": "h1"}
        assert await store.count(name) == 3
        hits = await store.search(name, np.array([0, 1, 0], dtype=np.float32), top_k=1)
        assert [(h.chunk_id, h.content) for h in hits] == [("d1#0", "new")]

    async def test_document_count_counts_documents_not_chunks(self, store: VectorStore) -> None:
        """A store offering ``document_count`` counts each stored document once, chunkless ones too."""
        if not isinstance(store, DocumentCounter):
            pytest.skip("this store offers no document count")  # a capability, not a requirement
        name = await self._index(store)
        assert await store.document_count(name) == 0
        await store.replace_document(
            name, _doc("d1"), [_chunk("d1", 0, "a"), _chunk("d1", 1, "b")], _vectors([1, 0, 0], [0, 1, 0])
        )
        await store.replace_document(name, _doc("d1", "h2"), [_chunk("d1", 0, "c")], _vectors([0, 0, 1]))
        await store.replace_document(name, _doc("d2"), [], np.empty((0, 3), dtype=np.float32))
        await store.replace_document(name, _doc("d3"), [_chunk("d3", 0, "d")], _vectors([1, 1, 0]))
        assert (await store.document_count(name), await store.count(name)) == (3, 2)
        assert await store.delete_documents(name, ["d3", "missing"]) == 1
        assert await store.document_count(name) == 2
        assert await store.document_count(_name("missing")) == 0

    async def test_document_stamps_are_kept_beside_content_hashes(self, store: VectorStore) -> None:
        """A store offering stamps keeps each write's stamp, clears it on a write without one, and updates
        the stamps of stored documents only."""
        if not isinstance(store, DocumentStamps):
            pytest.skip("this store keeps no document stamps")  # a capability, not a requirement
        name = await self._index(store)
        stamped = StoredDocument(document_id="a", content_hash="h1", stamp="12:1700000000000000000:salt")
        await store.replace_document(name, stamped, [_chunk("a", 0, "x")], _vectors([1, 0, 0]))
        await store.replace_document(name, _doc("b"), [_chunk("b", 0, "y")], _vectors([0, 1, 0]))
        empty = np.empty((0, 3), dtype=np.float32)
        write = DocumentWrite(StoredDocument(document_id="c", content_hash="h3", stamp="s3"), [], empty)
        if isinstance(store, BulkDocumentWriter):
            await store.replace_documents(name, [write, DocumentWrite(_doc("d"), [], empty)])
        else:
            await store.replace_document(name, *write)
        assert dict(await store.document_stamps(name, ["a", "b", "c", "missing"])) == {
            "a": "12:1700000000000000000:salt",
            "c": "s3",
        }
        await store.update_stamps(name, {"b": "s2", "missing": "sx"})
        assert dict(await store.document_stamps(name, ["a", "b", "c", "missing"])) == {
            "a": "12:1700000000000000000:salt",
            "b": "s2",
            "c": "s3",
        }
        assert dict(await store.document_hashes(name, ["a", "b", "missing"])) == {"a": "h1", "b": "h1"}
        await store.replace_document(name, _doc("a", "h2"), [_chunk("a", 0, "z")], _vectors([0, 0, 1]))
        assert dict(await store.document_stamps(name, ["a", "b"])) == {"b": "s2"}
        assert dict(await store.document_stamps(name, [])) == {}
        assert dict(await store.document_stamps(_name("missing"), ["a"])) == {}
        await store.update_stamps(_name("missing"), {"a": "s"})

    async def test_health_reports_a_usable_store(self, store: VectorStore) -> None:
        if not isinstance(store, HealthCheck):
            pytest.skip("this store offers no health check")  # a capability, not a requirement
        assert await store.health() == StoreHealth(healthy=True)

    async def test_filters_are_anded_and_applied_before_top_k(self, store: VectorStore) -> None:
        """The best overall chunk is filtered out, so top_k=1 returns the best of the subset."""
        name = await self._index(store)
        chunks = [
            _chunk("d1", 0, "best", team="a", lang="en"),
            _chunk("d1", 1, "second", team="b", lang="en"),
            _chunk("d1", 2, "third", team="b", lang="de"),
        ]
        await store.replace_document(name, _doc("d1"), chunks, _vectors([1, 0, 0], [0.9, 0.1, 0], [0.8, 0.2, 0]))
        query = np.array([1, 0, 0], dtype=np.float32)
        hits = await store.search(name, query, top_k=1, filters={"team": "b"})
        assert [h.chunk_id for h in hits] == ["d1#1"]
        hits = await store.search(name, query, top_k=5, filters={"team": "b", "lang": "de"})
        assert [h.chunk_id for h in hits] == ["d1#2"]
        assert await store.search(name, query, top_k=5, filters={"missing": "x"}) == []
        assert await store.search(name, query, top_k=5, filters={"team": "B"}) == []

    async def test_top_k_limits_and_ties_break_by_identity(self, store: VectorStore) -> None:
        """Equal scores are ordered by (document_id, chunk_id); at most top_k hits come back."""
        name = await self._index(store)
        for doc in ("c", "a", "b"):
            await store.replace_document(name, _doc(doc), [_chunk(doc, 0, doc)], _vectors([1, 0, 0]))
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=2)
        assert [h.document_id for h in hits] == ["a", "b"]

    async def test_bad_requests_fail_with_clear_errors(self, store: VectorStore) -> None:
        """Wrong query dimension, non-positive top_k and unknown index are typed errors."""
        name = await self._index(store)
        await store.replace_document(name, _doc("d1"), [_chunk("d1", 0, "a")], _vectors([1, 0, 0]))
        with pytest.raises(VectorDimensionMismatchError):
            await store.search(name, np.array([1, 0], dtype=np.float32), top_k=1)
        with pytest.raises(RagValidationError):
            await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=0)
        with pytest.raises(VectorIndexNotFoundError):
            await store.search(_name("missing"), np.array([1, 0, 0], dtype=np.float32), top_k=1)
        with pytest.raises(VectorDimensionMismatchError):
            await store.replace_document(name, _doc("d2"), [_chunk("d2", 0, "b")], _vectors([1, 0]))

    async def test_indexes_are_isolated(self, store: VectorStore) -> None:
        """The same document id in two indexes are two documents."""
        first, second = await self._index(store), await self._index(store)
        await store.replace_document(first, _doc("d1"), [_chunk("d1", 0, "first")], _vectors([1, 0, 0]))
        await store.replace_document(second, _doc("d1"), [_chunk("d1", 0, "second")], _vectors([1, 0, 0]))
        await store.delete_documents(first, ["d1"])
        hits = await store.search(second, np.array([1, 0, 0], dtype=np.float32), top_k=5)
        assert [h.content for h in hits] == ["second"]
        assert await store.count(first) == 0

    async def test_top_k_above_the_documented_maximum_is_a_validation_error(self, store: VectorStore) -> None:
        """``MAX_CANDIDATES`` is the largest ``top_k``; beyond it (even past 64 bits) is a bad request."""
        name = await self._index(store)
        await store.replace_document(name, _doc("d1"), [_chunk("d1", 0, "a")], _vectors([1, 0, 0]))
        query = np.array([1, 0, 0], dtype=np.float32)
        assert len(await store.search(name, query, top_k=MAX_CANDIDATES)) == 1
        for top_k in (MAX_CANDIDATES + 1, 2**63 - 1, 2**63, 2**64):
            with pytest.raises(RagValidationError, match="top_k must be an integer from 1 to"):
                await store.search(name, query, top_k=top_k)

    async def test_metadata_round_trips(self, store: VectorStore) -> None:
        """Chunk metadata comes back with each hit, values typed as stored."""
        name = await self._index(store)
        chunk = _chunk("d1", 0, "a", title="Remote work", year=2024, draft=False)
        await store.replace_document(name, _doc("d1"), [chunk], _vectors([1, 0, 0]))
        hit = (await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=1))[0]
        assert dict(hit.metadata) == {"title": "Remote work", "year": 2024, "draft": False}
        assert await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=1, filters={"year": 2024})

    # -- filter equality (runiq.rag._stores.filters): one definition, every store -------------------

    async def _metadata_index(self, store: VectorStore, *metadata: dict[str, Any]) -> str:
        """One document whose chunk i (``d#i``) carries ``metadata[i]``; every chunk has the same vector."""
        name = await self._index(store)
        chunks = [_chunk("d", i, f"chunk {i}", **values) for i, values in enumerate(metadata)]
        await store.replace_document(name, _doc("d"), chunks, _vectors(*([1.0, 0.0, 0.0] for _ in chunks)))
        return name

    async def _matching(self, store: VectorStore, name: str, filters: dict[str, Any]) -> list[str]:
        hits = await store.search(name, np.array([1, 0, 0], dtype=np.float32), top_k=10, filters=filters)
        return sorted(hit.chunk_id for hit in hits)

    async def test_filter_numbers_compare_as_numbers(self, store: VectorStore) -> None:
        """3 and 3.0 are equal whichever side holds which; -0.0 equals 0; 3.5 only itself."""
        name = await self._metadata_index(store, {"n": 3}, {"n": 3.0}, {"n": 3.5}, {"n": -0.0}, {"n": 0})
        assert await self._matching(store, name, {"n": 3}) == ["d#0", "d#1"]
        assert await self._matching(store, name, {"n": 3.0}) == ["d#0", "d#1"]
        assert await self._matching(store, name, {"n": 3.5}) == ["d#2"]
        assert await self._matching(store, name, {"n": 0}) == ["d#3", "d#4"]
        assert await self._matching(store, name, {"n": -0.0}) == ["d#3", "d#4"]

    async def test_filter_booleans_are_not_numbers(self, store: VectorStore) -> None:
        """True is not 1 or 1.0 and False is not 0, in either direction."""
        name = await self._metadata_index(store, {"v": True}, {"v": 1}, {"v": False}, {"v": 0}, {"v": 1.0})
        assert await self._matching(store, name, {"v": True}) == ["d#0"]
        assert await self._matching(store, name, {"v": 1}) == ["d#1", "d#4"]
        assert await self._matching(store, name, {"v": 1.0}) == ["d#1", "d#4"]
        assert await self._matching(store, name, {"v": False}) == ["d#2"]
        assert await self._matching(store, name, {"v": 0}) == ["d#3"]

    async def test_filter_strings_never_equal_numbers_or_booleans(self, store: VectorStore) -> None:
        """The string "3" is not the number 3, "3.0" is not 3.0 and "true" is not True."""
        name = await self._metadata_index(store, {"v": "3"}, {"v": 3}, {"v": "true"}, {"v": True}, {"v": "3.0"})
        assert await self._matching(store, name, {"v": "3"}) == ["d#0"]
        assert await self._matching(store, name, {"v": 3}) == ["d#1"]
        assert await self._matching(store, name, {"v": 3.0}) == ["d#1"]
        assert await self._matching(store, name, {"v": "true"}) == ["d#2"]
        assert await self._matching(store, name, {"v": True}) == ["d#3"]
        assert await self._matching(store, name, {"v": "3.0"}) == ["d#4"]

    async def test_filter_strings_compare_exactly(self, store: VectorStore) -> None:
        """Code point for code point: no Unicode normalisation, case folding or trimming."""
        nfc, nfd = "caf\u00e9", "cafe\u0301"
        name = await self._metadata_index(store, {"w": nfc}, {"w": nfd}, {"w": "Caf\u00e9"}, {"w": f"{nfc} "})
        assert await self._matching(store, name, {"w": nfc}) == ["d#0"]
        assert await self._matching(store, name, {"w": nfd}) == ["d#1"]
        assert await self._matching(store, name, {"w": "CAF\u00c9"}) == []
        assert await self._matching(store, name, {"w": f"{nfc} "}) == ["d#3"]

    async def test_filter_integers_are_exact_and_floats_mean_their_shortest_decimal(self, store: VectorStore) -> None:
        """2**53 + 1 is not 2**53; a float equals the decimal JSON writes for it (1e18, not 2.0**60 == 2**60)."""
        name = await self._metadata_index(
            store, {"v": 2**53}, {"v": 2**53 + 1}, {"v": 2**63 - 1}, {"v": -(2**63)}, {"v": 2**60}, {"v": 10**18}
        )
        assert await self._matching(store, name, {"v": 2**53}) == ["d#0"]
        assert await self._matching(store, name, {"v": 2**53 + 1}) == ["d#1"]
        assert await self._matching(store, name, {"v": float(2**53)}) == ["d#0"]
        assert await self._matching(store, name, {"v": 2**63 - 1}) == ["d#2"]
        assert await self._matching(store, name, {"v": -(2**63)}) == ["d#3"]
        assert await self._matching(store, name, {"v": 2**60}) == ["d#4"]
        assert await self._matching(store, name, {"v": float(2**60)}) == []  # written 1.152921504606847e+18
        assert await self._matching(store, name, {"v": 1e18}) == ["d#5"]

    @pytest.mark.parametrize(
        "filters",
        [
            pytest.param({"v": float("nan")}, id="nan"),
            pytest.param({"v": float("inf")}, id="inf"),
            pytest.param({"v": float("-inf")}, id="minus-inf"),
            pytest.param({"v": 2**63}, id="int-above-64-bits"),
            pytest.param({"v": -(2**63) - 1}, id="int-below-64-bits"),
            pytest.param({"v": None}, id="null"),
            pytest.param({"v": [1]}, id="list"),
            pytest.param({"v": {"a": 1}}, id="object"),
            pytest.param({"v": b"x"}, id="bytes"),
            pytest.param({"v": "a\x00b"}, id="nul-in-value"),
            pytest.param({"": "x"}, id="empty-key"),
            pytest.param({" ": "x"}, id="blank-key"),
            pytest.param({"a\x00": "x"}, id="nul-in-key"),
            pytest.param({1: "x"}, id="non-string-key"),
        ],
    )
    async def test_filters_no_store_can_evaluate_are_validation_errors(
        self, store: VectorStore, filters: dict[Any, Any]
    ) -> None:
        """Non-finite numbers, integers beyond 64 bits, null, lists, objects and NUL are rejected up front."""
        name = await self._metadata_index(store, {"v": 1})
        with pytest.raises(RagValidationError, match=r"^Filter"):
            await self._matching(store, name, filters)


class EmbeddingClientContract:
    """Override ``client`` to yield an open :class:`EmbeddingClient`."""

    @pytest.fixture
    async def client(self) -> AsyncIterator[EmbeddingClient]:
        raise NotImplementedError("override the 'client' fixture")
        yield  # pragma: no cover

    async def test_shape_dtype_and_identity(self, client: EmbeddingClient) -> None:
        """One float32 row of ``dimensions`` per input, and a non-empty model name."""
        result = await client.embed(["alpha", "beta", "gamma"], EmbeddingInputKind.DOCUMENT)
        assert result.shape == (3, client.dimensions)
        assert result.dtype == np.float32
        assert np.isfinite(result).all()
        assert client.model_name

    async def test_order_is_preserved(self, client: EmbeddingClient) -> None:
        """Row i belongs to input i whatever the batch order."""
        forward = await client.embed(["first text", "second text"], EmbeddingInputKind.DOCUMENT)
        backward = await client.embed(["second text", "first text"], EmbeddingInputKind.DOCUMENT)
        np.testing.assert_allclose(forward[0], backward[1], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(forward[1], backward[0], rtol=1e-4, atol=1e-5)

    async def test_empty_and_whitespace_inputs_are_allowed(self, client: EmbeddingClient) -> None:
        """Empty strings still produce finite rows."""
        result = await client.embed(["", "   "], EmbeddingInputKind.DOCUMENT)
        assert result.shape == (2, client.dimensions)
        assert np.isfinite(result).all()

    async def test_query_embedding_matches_document_space(self, client: EmbeddingClient) -> None:
        """A query is most similar to the document that shares its words."""
        docs = await client.embed(["remote work policy", "expense receipts"], EmbeddingInputKind.DOCUMENT)
        query = (await client.embed(["remote work"], EmbeddingInputKind.QUERY))[0]
        sims = docs @ query / (np.linalg.norm(docs, axis=1) * np.linalg.norm(query) + 1e-9)
        assert sims[0] > sims[1]

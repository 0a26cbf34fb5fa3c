"""The BEIR harness on a tiny hand-made collection: loader, metrics, and real runiq/bm25s runs."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import _beir, _corpus_files, beir_eval  # noqa: E402
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder  # noqa: E402

CORPUS = [
    {"_id": "d1", "title": "Remote work policy", "text": "Remote work is allowed three days a week under POL-HR-014."},
    {
        "_id": "d2",
        "title": "Build errors",
        "text": "Error CS1503 happens in filename.cs when IRagRetriever is misused.",
    },
    {"_id": "d3", "title": "Cafeteria", "text": "The cafeteria opens at noon and serves soup."},
    {"_id": "d4", "title": "Remote access", "text": "VPN remote access requires a hardware token."},
]
QUERIES = [
    {"_id": "q1", "text": "remote work policy"},
    {"_id": "q2", "text": "CS1503 error"},
    {"_id": "q3", "text": '"serves soup"'},  # quotes are prose to the harness (plain query syntax)
    {"_id": "q4", "text": "hardware token"},  # judged relevant: d1 only, which does not contain the words
    {"_id": "q5", "text": "an unjudged query"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td4\t1\nq1\td3\t0\nq2\td2\t1\nq3\td3\t1\nq4\td1\t1\n"


@pytest.fixture
def collection_dir(tmp_path: Path) -> Path:
    root = tmp_path / "tiny-beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(QRELS, encoding="utf-8")
    return root


def test_loader_reads_corpus_queries_and_graded_qrels(collection_dir: Path) -> None:
    collection = _beir.load_beir(collection_dir)
    assert collection.name == "tiny-beir"
    assert list(collection.corpus) == ["d1", "d2", "d3", "d4"]
    assert collection.corpus["d3"] == ("Cafeteria", "The cafeteria opens at noon and serves soup.")
    assert collection.document_text("d3") == "Cafeteria\n\nThe cafeteria opens at noon and serves soup."
    # q5 has no judgement, so it is not evaluated; the header line is not a judgement.
    assert list(collection.queries) == ["q1", "q2", "q3", "q4"]
    assert collection.qrels["q1"] == {"d1": 2, "d4": 1, "d3": 0}
    assert "query-id" not in collection.qrels


def test_loader_rejects_a_directory_that_is_not_beir(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"corpus\.jsonl"):
        _beir.load_beir(tmp_path)


def test_ndcg_uses_graded_gains_and_log2_discount() -> None:
    judgements = {"a": 2, "b": 1, "c": 0}
    # DCG = 1/log2(2) + 0 + 2/log2(4) = 2; IDCG = 2/log2(2) + 1/log2(3)
    expected = 2.0 / (2.0 + 1.0 / math.log2(3))
    assert _beir.ndcg_at_k(["b", "x", "a"], judgements, 10) == pytest.approx(expected)
    assert _beir.ndcg_at_k(["a", "b"], judgements, 10) == pytest.approx(1.0)
    assert _beir.ndcg_at_k(["c", "x"], judgements, 10) == 0.0
    # Cut at k: only "b" at rank 1 counts; the ideal at k=1 is the gain-2 document.
    assert _beir.ndcg_at_k(["b", "a"], judgements, 1) == pytest.approx(0.5)


def test_mrr_and_recall_by_hand() -> None:
    judgements = {"a": 2, "b": 1, "c": 0}
    assert _beir.mrr_at_k(["x", "c", "b"], judgements, 10) == pytest.approx(1 / 3)
    assert _beir.mrr_at_k(["x", "c", "b"], judgements, 2) == 0.0
    assert _beir.recall_at_k(["a", "x"], judgements, 100) == pytest.approx(0.5)
    assert _beir.recall_at_k(["x", "a"], judgements, 1) == 0.0
    assert _beir.recall_at_k(["b", "a"], judgements, 100) == pytest.approx(1.0)


def test_evaluate_averages_over_judged_queries_and_dedupes_chunks() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"z": 0}}  # q3 has nothing relevant: not evaluated
    run = {"q1": ["a", "a", "x"]}  # q2 missing: scores 0, not dropped
    metrics = _beir.evaluate(run, qrels)
    assert metrics == {"ndcg@10": pytest.approx(0.5), "mrr@10": pytest.approx(0.5), "recall@100": pytest.approx(0.5)}
    assert _beir.dedupe_documents(["a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_plain_query_removes_phrase_syntax() -> None:
    assert beir_eval.plain_query('the "training"  phase') == "the training phase"


async def test_runiq_lexical_in_memory_on_the_tiny_collection(collection_dir: Path) -> None:
    collection = _beir.load_beir(collection_dir)
    options = beir_eval.EvalOptions(modes=["lexical"], embedding="none", top_k=100)
    (row,) = await beir_eval.evaluate_runiq(collection, options)
    # q1: d1 (gain 2) then d4 (gain 1) -> 1.0; q2: d2 first -> 1.0; q3: d3 only -> 1.0;
    # q4: only d4 matches and it is not relevant -> 0.
    assert row["system"] == "runiq" and row["store"] == "memory" and row["mode"] == "lexical"
    assert row["chunks"] == 4  # one chunk per document
    assert row["ndcg@10"] == pytest.approx(0.75)
    assert row["mrr@10"] == pytest.approx(0.75)
    assert row["recall@100"] == pytest.approx(0.75)
    assert row["qps"] > 0
    assert row["failed_queries"] == 0


@pytest.mark.parametrize("file_format", ["markdown", "text"])
async def test_runiq_through_a_directory_of_files(collection_dir: Path, tmp_path: Path, file_format: str) -> None:
    """--source files: one file per document (the title as a '# ' heading or a first line), read with
    use_directory and the default chunking; hits map back from file paths to corpus ids."""
    collection = _beir.load_beir(collection_dir)
    options = beir_eval.EvalOptions(
        modes=["lexical"], embedding="none", source="files", files_dir=tmp_path, file_format=file_format
    )
    (row,) = await beir_eval.evaluate_runiq(collection, options)
    assert row["source"] == "files" and row["file_format"] == file_format
    assert row["chunks"] == 4
    assert row["ndcg@10"] == pytest.approx(0.75)
    suffix = ".md" if file_format == "markdown" else ".txt"
    written = (tmp_path / f"tiny-beir-{suffix[1:]}" / _corpus_files.document_path(2, suffix)).read_text()
    heading = "# Cafeteria" if file_format == "markdown" else "Cafeteria"
    assert written == f"{heading}\n\nThe cafeteria opens at noon and serves soup.\n"


def test_bm25s_baseline_on_the_tiny_collection(collection_dir: Path) -> None:
    collection = _beir.load_beir(collection_dir)
    row = beir_eval.evaluate_bm25s(collection, stopwords="english", top_k=100)
    assert row["system"] == "bm25s" and row["tokenization"] == "stopwords=english"
    assert row["ndcg@10"] == pytest.approx(0.75)
    assert row["recall@100"] == pytest.approx(0.75)


def test_main_writes_the_documented_json(
    collection_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "result.json"
    assert beir_eval.main([str(collection_dir), "--mode", "lexical", "--embedding", "none", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["collection"] == "tiny-beir"
    systems = [(r["system"], r["mode"]) for r in report["results"]]
    assert systems == [("bm25s", "lexical")] * 3 + [("runiq", "lexical")]
    for row in report["results"]:
        assert {"system", "store", "mode", "ndcg@10", "mrr@10", "recall@100", "qps"} <= set(row)
    assert "nDCG@10" in capsys.readouterr().out


async def test_caching_embedding_client_embeds_each_text_once(tmp_path: Path) -> None:
    inner = HashingEmbedder(32)
    path = tmp_path / "cache.npz"
    cache = beir_eval._VectorCache(path, inner.dimensions)
    client = beir_eval.CachingEmbeddingClient(inner, cache)
    first = await client.embed(["alpha", "beta"], EmbeddingInputKind.DOCUMENT)
    second = await client.embed(["beta", "alpha", "gamma"], EmbeddingInputKind.DOCUMENT)
    assert (client.hits, client.misses) == (2, 3)
    np.testing.assert_array_equal(second[1], first[0])
    np.testing.assert_array_equal(second[2], inner.embed_sync(["gamma"])[0])
    await client.embed(["alpha"], EmbeddingInputKind.QUERY)  # queries and documents are cached apart
    assert client.misses == 4
    cache.save()
    reloaded = beir_eval.CachingEmbeddingClient(inner, beir_eval._VectorCache(path, inner.dimensions))
    again = await reloaded.embed(["gamma", "alpha"], EmbeddingInputKind.DOCUMENT)
    assert (reloaded.hits, reloaded.misses) == (2, 0)
    np.testing.assert_array_equal(again[0], second[2])

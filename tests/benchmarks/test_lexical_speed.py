"""The lexical speed harness on a tiny collection: the scaled corpus, the query stream, the exact
reference and one real speed run (runiq through the public API beside bm25s)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import _corpus, lexical_speed  # noqa: E402

CORPUS = [
    {"_id": "d1", "title": "Remote work policy", "text": "Remote work is allowed three days a week under POL-HR-014."},
    {
        "_id": "d2",
        "title": "Build errors",
        "text": "Error CS1503 happens in filename.cs when IRagRetriever is misused.",
    },
    {"_id": "d3", "title": "Cafeteria", "text": "The cafeteria opens at noon and serves soup every work day."},
]
QUERIES = [{"_id": "q1", "text": "remote work policy"}, {"_id": "q2", "text": 'the "CS1503" error'}]


@pytest.fixture
def collection_dir(tmp_path: Path) -> Path:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in QUERIES) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    return root


def test_the_corpus_repeats_with_word_dropout_deterministically(collection_dir: Path) -> None:
    ids, texts = _corpus.repeat_with_dropout(collection_dir, 8)
    assert ids == ["d1~0", "d2~0", "d3~0", "d1~1", "d2~1", "d3~1", "d1~2", "d2~2"]
    assert texts[0] == "Remote work policy\n\nRemote work is allowed three days a week under POL-HR-014."
    for i, copy in enumerate(texts[3:], start=3):
        assert set(copy.split()) <= set(texts[i % 3].split())
    assert sum(len(t.split()) for t in texts[3:6]) < sum(len(t.split()) for t in texts[:3])
    assert _corpus.repeat_with_dropout(collection_dir, 8) == (ids, texts)


def test_questions_cycle_with_quotes_removed(collection_dir: Path) -> None:
    assert _corpus.load_questions(collection_dir, 5) == [
        "remote work policy",
        "the CS1503 error",
        "remote work policy",
        "the CS1503 error",
        "remote work policy",
    ]


def test_a_speed_run_agrees_with_exact_bm25(collection_dir: Path) -> None:
    args = argparse.Namespace(data=collection_dir, rows=30, queries=4, repeats=1, top_k=3)
    result = lexical_speed.asyncio.run(lexical_speed.speed(args))
    assert result["exact_agreement"] == {"queries": 2, "identical_top_k": 2, "mean_overlap": 1.0}
    assert set(result["timings"]) == set(lexical_speed.SPEED_SYSTEMS)
    assert all(row["qps"] > 0 and row["p95_ms"] >= row["p50_ms"] > 0 for row in result["timings"].values())
    assert result["writes"]["replace_p50_ms"] > 0


def test_the_exact_reference_ranks_like_the_formula(collection_dir: Path) -> None:
    ids, texts = _corpus.repeat_with_dropout(collection_dir, 3)
    exact = lexical_speed.ExactBM25(texts)
    assert exact.top("remote work", ids, 3) == ["d1~0", "d3~0"]
    assert exact.top("soup cafeteria", ids, 1) == ["d3~0"]
    assert exact.top("nothing matches", ids, 3) == []

"""BEIR-layout loading and the ranking metrics used by ``beir_eval.py``.

Layout (https://github.com/beir-cellar/beir): ``corpus.jsonl`` (``_id``, ``title``, ``text``),
``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (tab-separated ``query-id``,
``corpus-id``, ``score``, with a header line). Scores may be graded; a score <= 0 means judged
non-relevant.

Metrics follow ``trec_eval`` / ``pytrec_eval`` as BEIR reports them:

* nDCG@k: ``DCG = sum(gain_i / log2(i + 1))`` over ranks ``i = 1..k``, gain = the graded qrel score
  (linear gain, as ``ndcg_cut`` does), divided by the DCG of the ideal ordering of the judged documents.
* MRR@k: ``1 / rank`` of the first relevant document (score > 0) within the top k, else 0.
* Recall@k: relevant documents in the top k / all relevant documents of the query.

Only queries with at least one relevant judgement are evaluated; a query the system returns nothing
for scores 0 on every metric (it is never dropped).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BeirCollection",
    "Qrels",
    "Run",
    "dedupe_documents",
    "evaluate",
    "load_beir",
    "mrr_at_k",
    "ndcg_at_k",
    "recall_at_k",
]

Qrels = Mapping[str, Mapping[str, int]]  # query id -> document id -> graded relevance
Run = Mapping[str, Sequence[str]]  # query id -> document ids, best first


@dataclass(frozen=True, slots=True)
class BeirCollection:
    name: str
    corpus: dict[str, tuple[str, str]]  # document id -> (title, text)
    queries: dict[str, str]  # only the queries that have a relevant judgement, file order
    qrels: dict[str, dict[str, int]]

    def document_text(self, doc_id: str) -> str:
        """Title and body as one text, the usual BEIR convention for lexical baselines."""
        title, text = self.corpus[doc_id]
        return f"{title}\n\n{text}" if title else text


def _read_jsonl(path: Path) -> Iterable[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path.name}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict) or "_id" not in record:
                raise ValueError(f"{path.name}:{number}: a record needs an '_id'")
            yield record


def _load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if len(row) < 3:
                raise ValueError(f"{path.name}:{number}: expected query-id, corpus-id, score")
            query_id, doc_id, score = row[0].strip(), row[1].strip(), row[2].strip()
            try:
                value = int(float(score))
            except ValueError:
                if number == 1:  # the header line ("query-id corpus-id score")
                    continue
                raise ValueError(f"{path.name}:{number}: score '{score}' is not a number") from None
            qrels.setdefault(query_id, {})[doc_id] = value
    return qrels


def load_beir(data_dir: str | Path, split: str = "test") -> BeirCollection:
    root = Path(data_dir)
    for required in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (root / required).is_file():
            raise FileNotFoundError(f"{root}: missing {required} (not a BEIR-layout collection)")
    corpus: dict[str, tuple[str, str]] = {}
    for record in _read_jsonl(root / "corpus.jsonl"):
        corpus[str(record["_id"])] = (str(record.get("title") or ""), str(record.get("text") or ""))
    all_queries = {str(r["_id"]): str(r.get("text") or "") for r in _read_jsonl(root / "queries.jsonl")}
    qrels = _load_qrels(root / "qrels" / f"{split}.tsv")
    judged = {q for q, docs in qrels.items() if any(v > 0 for v in docs.values())}
    queries = {q: text for q, text in all_queries.items() if q in judged and text.strip()}
    return BeirCollection(
        name=root.resolve().name,
        corpus=corpus,
        queries=queries,
        qrels={q: dict(docs) for q, docs in qrels.items() if q in queries},
    )


def dedupe_documents(doc_ids: Iterable[str]) -> list[str]:
    """Chunk hits (best first) -> documents, each at its best chunk's position (max aggregation)."""
    seen: set[str] = set()
    out = []
    for doc_id in doc_ids:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
    return out


def ndcg_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int = 10) -> float:
    gains = sorted((g for g in judgements.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    if ideal == 0:
        return 0.0
    dcg = sum(max(judgements.get(doc, 0), 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    return dcg / ideal


def mrr_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if judgements.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def recall_at_k(ranked: Sequence[str], judgements: Mapping[str, int], k: int = 100) -> float:
    relevant = {doc for doc, g in judgements.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def evaluate(run: Run, qrels: Qrels, *, ndcg_k: int = 10, mrr_k: int = 10, recall_k: int = 100) -> dict[str, float]:
    """Mean metrics over every judged query in ``qrels`` (missing from ``run`` = empty ranking)."""
    judged = [q for q, docs in qrels.items() if any(g > 0 for g in docs.values())]
    if not judged:
        raise ValueError("no query has a relevant judgement")
    totals = {f"ndcg@{ndcg_k}": 0.0, f"mrr@{mrr_k}": 0.0, f"recall@{recall_k}": 0.0}
    for query_id in judged:
        ranked = dedupe_documents(run.get(query_id, ()))
        judgements = qrels[query_id]
        totals[f"ndcg@{ndcg_k}"] += ndcg_at_k(ranked, judgements, ndcg_k)
        totals[f"mrr@{mrr_k}"] += mrr_at_k(ranked, judgements, mrr_k)
        totals[f"recall@{recall_k}"] += recall_at_k(ranked, judgements, recall_k)
    return {name: value / len(judged) for name, value in totals.items()}

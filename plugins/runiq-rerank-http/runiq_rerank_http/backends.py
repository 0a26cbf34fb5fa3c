"""The rerank APIs this plugin speaks: where each lives, what it is sent, and how its scores are read.

* ``cohere``: POST ``/v2/rerank`` ``{model, query, documents, top_n}`` ->
  ``{results: [{index, relevance_score}]}``; the score is used as is.
* ``jina``: POST ``/v1/rerank`` ``{model, query, documents, top_n, return_documents}`` ->
  ``{results: [{index, relevance_score}]}``; as is.
* ``tei``: POST ``/rerank`` ``{query, texts, raw_scores, return_text, truncate}`` -> ``[{index, score}]``;
  ``raw_scores=true``, so the score is a logit, mapped with the sigmoid.
* ``infinity``: POST ``/rerank`` ``{query, documents, top_n, raw_scores, return_documents}`` ->
  ``{results: [{index, relevance_score}]}``; ``raw_scores=false``, as is.
* ``vllm``: POST ``/v1/rerank`` ``{query, documents, top_n}`` (``model`` when given) ->
  ``{results: [{index, relevance_score}]}``; as is.

Every API answers with a list of ``{index, score}`` items, usually sorted by score; ``index`` is the
document's zero-based position in the request, and the client maps results back by it (never by order).

* Cohere documents ``relevance_score`` as normalised to [0, 1]; ``top_n`` defaults to every document.
  Cohere recommends at most 1,000 documents per request, the default batch size here.
* Jina's ``relevance_score`` is in [0, 1] for its reranker models; ``return_documents`` defaults to
  true there, so ``false`` is sent (the text need not travel back). No per-request document limit is
  documented; 1,000 is used (runiq never sends more than ``MAX_RERANK_CANDIDATES`` = 1,000 at once anyway).
* Hugging Face Text Embeddings Inference returns a bare list. With ``raw_scores=false`` (its default)
  it applies a sigmoid to single-logit models itself; runiq asks for ``raw_scores=true`` and applies
  the same sigmoid (:func:`runiq_rerank_http.scores.sigmoid`), so the mapping is defined here and matches
  a local ``CrossEncoder``. ``truncate=true`` is sent so a chunk longer than the model's window is scored
  on its head instead of failing the request. TEI refuses requests with more texts than its
  ``--max-client-batch-size`` (default 32), the default batch size here.
* Infinity follows Cohere's response shape; with ``raw_scores=false`` (its default, sent explicitly)
  it returns sigmoid-mapped scores. It accepts at most 2,048 documents per request.
* vLLM's ``/v1/rerank`` (also served as ``/rerank`` and ``/v2/rerank``) follows the Jina/Cohere shape;
  ``relevance_score`` is the model's output after its activation (a sigmoid for single-label
  cross-encoders). For a deployment that returns logits, select ``score_mapping="sigmoid"``. No
  per-request document limit is documented; 1,000 is used.

``top_n`` is always the number of documents sent, so a server default below it (some compatible
proxies default to 10) cannot silently drop candidates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from runiq_rerank_http.scores import ScoreMapping

__all__ = ["BACKENDS", "BackendSpec", "RerankBackend"]


class RerankBackend(StrEnum):
    COHERE = "cohere"
    JINA = "jina"
    TEI = "tei"
    INFINITY = "infinity"
    VLLM = "vllm"


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendSpec:
    """One API's defaults. ``base_url`` ``None`` means the deployment's address must be given;
    ``api_key_env`` ``None`` means no key is sent unless one is configured (a self-hosted server)."""

    path: str
    base_url: str | None
    model: str | None
    api_key_env: str | None
    max_documents: int
    score_mapping: ScoreMapping
    texts_field: str  # the request's list of documents: "documents" or TEI's "texts"
    score_field: str  # the result item's score: "relevance_score" or TEI's "score"
    results_field: str | None  # the response's list of results; None: the body is the list (TEI)


BACKENDS: Mapping[RerankBackend, BackendSpec] = {
    RerankBackend.COHERE: BackendSpec(
        path="/v2/rerank",
        base_url="https://api.cohere.com",
        model="rerank-v3.5",
        api_key_env="CO_API_KEY",
        max_documents=1000,
        score_mapping=ScoreMapping.AS_IS,
        texts_field="documents",
        score_field="relevance_score",
        results_field="results",
    ),
    RerankBackend.JINA: BackendSpec(
        path="/v1/rerank",
        base_url="https://api.jina.ai",
        model="jina-reranker-v2-base-multilingual",
        api_key_env="JINA_API_KEY",
        max_documents=1000,
        score_mapping=ScoreMapping.AS_IS,
        texts_field="documents",
        score_field="relevance_score",
        results_field="results",
    ),
    RerankBackend.TEI: BackendSpec(
        path="/rerank",
        base_url=None,
        model=None,
        api_key_env=None,
        max_documents=32,
        score_mapping=ScoreMapping.SIGMOID,
        texts_field="texts",
        score_field="score",
        results_field=None,
    ),
    RerankBackend.INFINITY: BackendSpec(
        path="/rerank",
        base_url=None,
        model=None,
        api_key_env=None,
        max_documents=2048,
        score_mapping=ScoreMapping.AS_IS,
        texts_field="documents",
        score_field="relevance_score",
        results_field="results",
    ),
    RerankBackend.VLLM: BackendSpec(
        path="/v1/rerank",
        base_url=None,
        model=None,
        api_key_env=None,
        max_documents=1000,
        score_mapping=ScoreMapping.AS_IS,
        texts_field="documents",
        score_field="relevance_score",
        results_field="results",
    ),
}

"""How a backend's score becomes a relevance in [0, 1], the reranker contract's range.

Two mappings, chosen per backend (see :mod:`runiq_rerank_http.backends`) and overridable:

* ``as_is``: the backend documents a score in [0, 1] (Cohere and Jina's ``relevance_score``, TEI and
  Infinity with ``raw_scores=false``, vLLM's score after the model's activation). The score is used
  unchanged; one outside [0, 1] is a contract violation, never clamped, so a misconfigured server fails
  loudly instead of ranking on a silently distorted scale.
* ``sigmoid``: the backend returns a cross-encoder logit (any real number). It is mapped with the
  logistic function ``1 / (1 + exp(-x))``, which is monotonic (the order is kept), maps 0 to 0.5, and
  is what sentence-transformers' ``CrossEncoder`` applies to single-logit models by default.
"""

from __future__ import annotations

import math
from enum import StrEnum

__all__ = ["ScoreMapping", "sigmoid"]


class ScoreMapping(StrEnum):
    AS_IS = "as_is"  # already a probability in [0, 1]; validated, not clamped
    SIGMOID = "sigmoid"  # a logit; mapped with 1 / (1 + exp(-x))


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large ``|x|`` (``math.exp`` of a large positive raises)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)

"""The BM25 formula: one definition of the idf and of a term's contribution, for every lexical engine.

Lucene's BM25: a chunk's score is the sum over the query's distinct terms it holds of

    qtf * (idf * tf / (tf + norm)),   norm = k1 * (1 - b + b * dl / avgdl),
    idf = ln(1 + (N - df + 0.5) / (df + 0.5))

with ``tf`` the term's frequency in the chunk, ``qtf`` its frequency in the query, ``dl`` the chunk's
length in word positions (identifier parts and stop words do not lengthen it; see
:class:`~runiq.rag._lexical.tokenizer.Analysis`), ``avgdl`` the mean length (1.0 when every chunk is
empty), ``N`` the number of chunks and ``df`` the number of chunks holding the term. The idf is never
negative (``df <= N``). The functions accept floats or numpy arrays and evaluate in the same order
either way, so a vectorised engine and a per-posting reference agree to the last bit (multiplying by
``qtf`` last keeps a term's contribution independent of the query, so an engine may reuse it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from runiq.rag._errors import RagValidationError

__all__ = ["BM25Parameters", "bm25_idf", "bm25_length_norm", "bm25_term_score"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Parameters:
    """The standard defaults; not tuned to any collection. ``k1 > 0`` and ``0 <= b <= 1``."""

    k1: float = 1.5
    b: float = 0.75

    def __post_init__(self) -> None:
        if not (math.isfinite(self.k1) and self.k1 > 0.0 and 0.0 <= self.b <= 1.0):
            raise RagValidationError("BM25 needs k1 > 0 and 0 <= b <= 1.")


def bm25_idf(documents: int, document_frequency: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` for ``N`` chunks of which ``df`` hold the term."""
    return math.log(1.0 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))


@overload
def bm25_length_norm(length: float, average_length: float, parameters: BM25Parameters) -> float: ...
@overload
def bm25_length_norm(length: npt.NDArray[Any], average_length: float, parameters: BM25Parameters) -> FloatArray: ...
def bm25_length_norm(
    length: float | npt.NDArray[Any], average_length: float, parameters: BM25Parameters
) -> float | FloatArray:
    """``k1 * (1 - b + b * dl / avgdl)``: the length normalisation of a chunk ``dl`` word positions long."""
    k1, b = parameters.k1, parameters.b
    return k1 * (1.0 - b + b * length / average_length)


@overload
def bm25_term_score(idf: float, tf: float, norm: float) -> float: ...
@overload
def bm25_term_score(idf: float, tf: npt.NDArray[Any], norm: FloatArray) -> FloatArray: ...
def bm25_term_score(idf: float, tf: float | npt.NDArray[Any], norm: float | FloatArray) -> float | FloatArray:
    """``idf * tf / (tf + norm)``: a chunk's score for one query term (times ``qtf`` when repeated).

    A ``tf`` of 0 scores exactly 0.0 whenever ``norm`` is positive.
    """
    return idf * tf / (tf + norm)

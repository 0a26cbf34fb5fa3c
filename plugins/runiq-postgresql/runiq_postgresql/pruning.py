"""MaxScore pruning of the BM25 candidate search: which query terms the candidates must hold.

A chunk's BM25 score is a sum over the query terms it holds of ``idf * qtf * tf / (tf + K)``, and
``tf / (tf + K) < 1``, so a term adds less than ``idf * qtf``: its bound. If the k-th best score
among *some* chunks is θ, the k-th best among all chunks is at least θ, so a chunk holding only
terms whose bounds sum to less than θ cannot reach the top k. Natural-language questions are mostly
common words: every chunk holding any query term is often half the corpus, but only the chunks
holding one of the rarer terms can make the top k.

The store scores the chunks holding the rarest terms first (few, by their document frequencies) to
learn a θ, then drops from the candidate search (never from the scoring) the common terms whose
bounds sum below θ. The result is exact: the same top k, scores and tie order as the full search.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["MARGIN", "candidate_terms", "rare_terms", "term_bounds", "worth_pruning"]

# Scores are ordered after rounding to nine decimals (ties then go by identity), so a left-out chunk
# must stay clearly below θ, not just below it.
MARGIN = 1e-6
FIRST_PASS_CHUNKS = 2000  # the rarest terms' document frequencies may sum to this much
_PRUNE_ABOVE_CHUNKS = 4 * FIRST_PASS_CHUNKS  # below this many (term, chunk) postings, search everything


def worth_pruning(frequencies: Mapping[str, int]) -> bool:
    """Two or more known terms holding many postings: below that one full search is cheaper."""
    present = [df for df in frequencies.values() if df > 0]
    return len(present) >= 2 and sum(present) > _PRUNE_ABOVE_CHUNKS


def rare_terms(frequencies: Mapping[str, int], budget: int | None = None) -> list[str]:
    """The rarest known terms whose document frequencies sum to at most ``budget``.

    Empty when even the rarest term is over budget: the first pass would then cost as much as the
    full search it is meant to narrow (every term common, as in a query of stop-word-like terms).
    """
    budget = FIRST_PASS_CHUNKS if budget is None else budget
    chosen: list[str] = []
    total = 0
    for term, df in sorted(((t, df) for t, df in frequencies.items() if df > 0), key=lambda item: (item[1], item[0])):
        if total + df > budget:
            break
        chosen.append(term)
        total += df
    return chosen


def term_bounds(
    query_frequencies: Mapping[str, int], frequencies: Mapping[str, int], chunk_count: int
) -> dict[str, float]:
    """Each known term's largest possible contribution: ``idf * qtf`` with the store's idf."""
    n = float(chunk_count)
    return {
        term: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * query_frequencies[term]
        for term, df in frequencies.items()
        if df > 0
    }


def candidate_terms(bounds: Mapping[str, float], theta: float) -> list[str]:
    """All terms but the longest run of smallest bounds whose sum stays below ``theta`` by ``MARGIN``."""
    ordered = sorted(bounds.items(), key=lambda item: (item[1], item[0]))
    total = 0.0
    for i, (_, bound) in enumerate(ordered):
        if total + bound + MARGIN >= theta:
            return [term for term, _ in ordered[i:]]
        total += bound
    return []

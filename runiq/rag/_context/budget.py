"""Context budgeting: a deterministic size measure and first-fit selection in the final order."""

from __future__ import annotations

import re
from collections.abc import Sequence

from runiq.rag._context.options import ContextBudget, ContextBudgetUnit

__all__ = ["estimate_tokens", "measure", "select_within_budget"]

# A maximal run of letters/digits, or any single other non-whitespace character.
_TOKEN = re.compile(r"[^\W_]+|\S")


def estimate_tokens(text: str) -> int:
    """Deterministic, model-free token estimate: letter/digit runs count 1, other non-space characters 1."""
    return sum(1 for _ in _TOKEN.finditer(text))


def measure(text: str, unit: ContextBudgetUnit) -> int:
    return len(text) if unit is ContextBudgetUnit.CHARACTERS else estimate_tokens(text)


def select_within_budget(sizes: Sequence[int], budget: ContextBudget) -> tuple[list[bool], int]:
    """Walk ``sizes`` in order; take each item whose size plus overhead still fits (skip, never truncate).

    Returns the per-item selection flags and the budget units used.
    """
    used = 0
    chosen = []
    for size in sizes:
        cost = size + budget.per_chunk_overhead
        fits = used + cost <= budget.maximum
        if fits:
            used += cost
        chosen.append(fits)
    return chosen, used

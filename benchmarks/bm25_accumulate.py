"""How fast the PostgreSQL store's BM25 scorer sums a query's postings, and what else could sum them.

    python benchmarks/bm25_accumulate.py [--rows 1000000] [--postings 1300000] [--terms 23] [--repeats 20]

Synthetic postings shaped like a CISI question over 1M chunks (about 23 lexemes and 1.3M postings
per query, Zipf-sized lists of distinct sorted row ids, int32 as the block cache keeps them). Times,
best of ``--repeats``:

* ``ranked``: ``ranking.ranked`` up to its first batch (the store's whole scoring step);
* ``add.at``: the accumulation it uses, ``np.add.at`` into a dense float64 array, term by term in
  query order;
* ``add.at int64``: the same over row ids already widened to int64 (as if the block cache kept them
  so, at twice the memory);
* ``bincount``: one ``np.bincount`` over the concatenated postings (the same sums bit for bit: both
  add each row's contributions in query order, starting from 0.0);
* ``fancy +=``: ``sums[rows] += values`` per term (exact here: a term lists each row once).

Every alternative is checked to give the same sums, bit for bit, as ``add.at``.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import postings, ranking

_Parts = list[tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]]


def term_postings(rows: int, total: int, terms: int, seed: int = 0) -> dict[str, postings.TermPostings]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, terms + 1) ** 1.1
    sizes = np.minimum((weights / weights.sum() * total).astype(int), rows)
    read = {}
    for i, size in enumerate(sizes):
        ids = np.sort(rng.choice(rows, size, replace=False)).astype(np.int32)
        tfs = rng.integers(0, 3, size).astype(np.uint8)
        lengths = rng.integers(20, 200, size).astype(np.uint16)
        read[f"t{i}"] = postings.TermPostings(ids, tfs, lengths, np.empty(0, np.int64))
    return read


def systems(read: dict[str, postings.TermPostings], rows: int) -> dict[str, Callable[[], object]]:
    terms = list(read)
    dfs = {t: len(read[t].rows) for t in terms}
    frequencies = dict.fromkeys(terms, 1)
    total_terms = rows * 100
    parts: _Parts = [
        (read[t].rows, ranking._contributions(read[t], rows, dfs[t], total_terms, total_terms / rows)) for t in terms
    ]
    wide = [(r.astype(np.intp), v) for r, v in parts]

    def ranked() -> object:
        return next(ranking.ranked(postings.gathered(read, terms), frequencies, rows, total_terms, dfs, 14))

    def add_at(pairs: _Parts | list[tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = parts) -> object:
        sums = np.zeros(rows)
        for ids, values in pairs:
            np.add.at(sums, ids, values)
        return sums

    def bincount() -> object:
        ids = np.concatenate([r for r, _ in parts])
        return np.bincount(ids, weights=np.concatenate([v for _, v in parts]), minlength=rows)

    def fancy() -> object:
        sums = np.zeros(rows)
        for ids, values in wide:
            sums[ids] += values
        return sums

    return {
        "ranked": ranked,
        "add.at": add_at,
        "add.at int64": lambda: add_at(wide),
        "bincount": bincount,
        "fancy +=": fancy,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--postings", type=int, default=1_300_000)
    parser.add_argument("--terms", type=int, default=23)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    read = term_postings(args.rows, args.postings, args.terms)
    named = systems(read, args.rows)
    reference = named["add.at"]()
    assert isinstance(reference, np.ndarray)
    print(f"{sum(len(p.rows) for p in read.values()):,} postings, {args.terms} terms, {args.rows:,} rows")
    for name, call in named.items():
        if name != "ranked":
            sums = call()
            if not isinstance(sums, np.ndarray) or sums.tobytes() != reference.tobytes():
                raise SystemExit(f"{name} sums differ from add.at's")
        best = min(timeit.repeat(call, number=1, repeat=args.repeats))
        print(f"{name:>14}: {best * 1000:7.2f} ms")


if __name__ == "__main__":
    main()

"""Reciprocal rank fusion: exact values, order independence, monotonicity and deterministic ties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag._retrieval import RRF_K
from runiq.rag.providers import ChunkKey, reciprocal_rank_fusion

KEYS = [ChunkKey(f"doc{i}", f"doc{i}#{j}") for i in range(6) for j in range(2)]
ranked = st.lists(st.sampled_from(KEYS), unique=True, max_size=len(KEYS))


def _scores(fused: list) -> dict[ChunkKey, float]:
    return {candidate.key: candidate.score for candidate in fused}


def test_constant_is_sixty() -> None:
    """The fusion constant is 60."""
    assert RRF_K == 60


def test_single_list_scores_are_one_over_sixty_plus_rank() -> None:
    """One source: rank r scores exactly 1 / (60 + r), one-based."""
    a, b, c = KEYS[:3]
    fused = reciprocal_rank_fusion([a, b, c])
    assert [(f.key, f.score, f.ranks) for f in fused] == [(a, 1 / 61, (1,)), (b, 1 / 62, (2,)), (c, 1 / 63, (3,))]


def test_rank_one_in_both_sources_scores_two_over_sixty_one() -> None:
    """An item first in both lists scores 2/61."""
    (fused,) = reciprocal_rank_fusion([KEYS[0]], [KEYS[0]])
    assert fused.score == pytest.approx(2 / 61, abs=1e-12)
    assert fused.ranks == (1, 1)


def test_small_case_exact_values_and_order() -> None:
    """semantic [a, b, c], lexical [c, a]: a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62."""
    a, b, c = KEYS[:3]
    fused = reciprocal_rank_fusion([a, b, c], [c, a])
    assert _scores(fused) == {a: 1 / 61 + 1 / 62, c: 1 / 63 + 1 / 61, b: 1 / 62}
    assert [f.key for f in fused] == [a, c, b]
    assert {f.key: f.ranks for f in fused} == {a: (1, 2), b: (2, None), c: (3, 1)}


def test_custom_constant() -> None:
    """k is configurable: rank 1 with k = 0 scores 1."""
    assert reciprocal_rank_fusion([KEYS[0]], k=0)[0].score == 1.0


def test_duplicates_in_one_list_keep_their_first_rank() -> None:
    """A key listed twice in one source counts once, at its first rank."""
    a, b = KEYS[:2]
    fused = reciprocal_rank_fusion([a, b, a])
    assert _scores(fused) == {a: 1 / 61, b: 1 / 62}


def test_equal_scores_prefer_the_better_single_rank() -> None:
    """On equal fused scores the item with the best single rank comes first, whichever source it is in."""
    x, y = ChunkKey("x", "x#0"), ChunkKey("y", "y#0")
    filler = [ChunkKey(f"f{i:03d}", f"f{i:03d}#0") for i in range(200)]
    semantic = [*filler[:61], y]  # y semantic rank 62
    lexical = [x, *filler[100:160], y]  # x lexical rank 1, y lexical rank 62
    fused = reciprocal_rank_fusion(semantic, lexical)
    scores = {f.key: f.score for f in fused}
    assert scores[x] == scores[y] == 1 / 61  # 1/61 == 2/122 exactly
    order = [f.key for f in fused]
    assert order.index(x) < order.index(y)  # best rank 1 beats best rank 62 despite y's better semantic rank


def test_equal_scores_and_best_rank_fall_back_to_the_semantic_rank() -> None:
    """Ranks (1, 2) and (2, 1) tie on score and best rank; the better semantic rank wins."""
    a, b = KEYS[:2]
    fused = reciprocal_rank_fusion([a, b], [b, a])
    assert fused[0].score == fused[1].score
    assert [f.key for f in fused] == [a, b]
    assert [f.key for f in reciprocal_rank_fusion([b, a], [a, b])] == [b, a]


def test_semantic_only_beats_lexical_only_at_the_same_rank() -> None:
    """Two single-source items at the same rank tie on score; the semantic-ranked one comes first."""
    a, b = KEYS[:2]
    assert [f.key for f in reciprocal_rank_fusion([a], [b])] == [a, b]
    assert [f.key for f in reciprocal_rank_fusion([b], [a])] == [b, a]


def test_empty_inputs_fuse_to_nothing() -> None:
    """No candidates in, none out."""
    assert reciprocal_rank_fusion([], []) == []
    assert reciprocal_rank_fusion() == []


@given(ranked, ranked)
def test_score_set_is_independent_of_source_order(first: list[ChunkKey], second: list[ChunkKey]) -> None:
    """Swapping the sources' argument order gives the same key -> score mapping and mirrored ranks."""
    forward = reciprocal_rank_fusion(first, second)
    backward = reciprocal_rank_fusion(second, first)
    assert _scores(forward) == pytest.approx(_scores(backward))
    assert {f.key: f.ranks for f in forward} == {b.key: b.ranks[::-1] for b in backward}


@given(ranked, ranked)
def test_scores_are_sums_of_reciprocal_ranks(first: list[ChunkKey], second: list[ChunkKey]) -> None:
    """Each key's score is the sum of 1/(60 + rank) over the lists it appears in; every key appears once."""
    fused = reciprocal_rank_fusion(first, second)
    expected: dict[ChunkKey, float] = {}
    for keys in (first, second):
        for rank, key in enumerate(keys, start=1):
            expected[key] = expected.get(key, 0.0) + 1 / (60 + rank)
    assert len(fused) == len(set(first) | set(second))
    assert _scores(fused) == pytest.approx(expected)


@given(ranked.filter(lambda keys: len(keys) >= 2), ranked, st.data())
def test_improving_a_rank_never_lowers_the_fused_score(
    first: list[ChunkKey], second: list[ChunkKey], data: st.DataObject
) -> None:
    """Moving an item earlier in one source strictly raises its fused score."""
    source = data.draw(st.integers(min_value=1, max_value=len(first) - 1), label="from")
    target = data.draw(st.integers(min_value=0, max_value=source - 1), label="to")
    item = first[source]
    improved = list(first)
    improved.insert(target, improved.pop(source))
    before = _scores(reciprocal_rank_fusion(first, second))[item]
    after = _scores(reciprocal_rank_fusion(improved, second))[item]
    assert after > before


@given(ranked, ranked)
def test_order_is_total_and_deterministic(first: list[ChunkKey], second: list[ChunkKey]) -> None:
    """Output is sorted by score, then best rank, semantic rank, lexical rank, identity; repeatable."""
    fused = reciprocal_rank_fusion(first, second)
    assert fused == reciprocal_rank_fusion(list(first), list(second))
    inf = float("inf")

    def key(f: object) -> tuple:
        ranks = [inf if r is None else r for r in f.ranks]  # type: ignore[attr-defined]
        return (-f.score, min(ranks), *ranks, f.key.document_id, f.key.chunk_id)  # type: ignore[attr-defined]

    assert [key(f) for f in fused] == sorted(key(f) for f in fused)
    assert [f.score for f in fused] == sorted((f.score for f in fused), reverse=True)

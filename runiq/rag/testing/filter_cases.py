"""Metadata rows, filters and their expected matches: the data of ``MetadataFilterContract``.

Plain data (no pytest), so a store's own tests (a SQL compiler's, say) can run the same cases.
``FILTER_ROWS[i]`` is chunk ``d#i``'s metadata; each :data:`FILTER_CASES` entry names the rows its
filter matches under :mod:`runiq.rag._stores.filters`. :func:`random_filter` draws filters over the
same keys and values for agreement tests against the reference :func:`~runiq.rag._stores.filters.matches`.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from runiq.rag.testing.fakes import CANARY

__all__ = [
    "FILTER_CASES",
    "FILTER_ROWS",
    "HOSTILE_FILTERS",
    "INJECTION_KEY",
    "deep_filter",
    "random_filter",
]

INJECTION_KEY = "te'am\"}; DROP TABLE chunks; -- $1 ?"
_PLUS_TWO = timezone(timedelta(hours=2))

FILTER_ROWS: tuple[dict[str, Any], ...] = (
    {  # d#0
        "team": "hr",
        "year": 2024,
        "score": 3.5,
        "tags": ("remote", "policy"),
        "draft": False,
        "published": "2024-05-01",
        "updated": "2024-05-01T10:00:00+02:00",
    },
    {  # d#1
        "team": "eng",
        "year": 2023,
        "score": 3,
        "tags": ("remote",),
        "draft": True,
        "published": "2023-12-31",
        "updated": "2024-05-01T08:00:00Z",
    },
    {  # d#2: an impossible date, an empty list, no "draft"
        "team": "Eng",
        "year": 2024.0,
        "score": -1,
        "tags": (),
        "published": "2024-02-30",
        "updated": "2024-05-01T08:00:00.000001Z",
    },
    {  # d#3: a string year, a date-shaped "updated", mixed list
        "team": "\u00e9",
        "year": "2024",
        "score": 10**18,
        "tags": ("policy", 3, True),
        "draft": 0,
        "published": "2024-5-1",
        "updated": "2024-05-01",
    },
    {  # d#4: no year, a scalar "tags", a number "published"
        "team": "hr",
        "score": 1e18,
        "tags": "remote",
        "published": 20240501,
        "updated": "2024-04-30T23:59:59-08:00",
    },
    {},  # d#5: no metadata at all
    {"team": ("hr", "eng"), "year": (2020, 2030)},  # d#6: list-valued
    {INJECTION_KEY: "v'; SELECT pg_sleep(5); --"},  # d#7: hostile key and value, stored as they are
)

_ALL = tuple(range(len(FILTER_ROWS)))

# (id, filter, indices of the rows it matches)
FILTER_CASES: tuple[tuple[str, dict[str, Any], tuple[int, ...]], ...] = (
    ("plain-equality", {"team": "hr"}, (0, 4, 6)),
    ("eq", {"team": {"$eq": "hr"}}, (0, 4, 6)),
    ("eq-is-case-sensitive", {"team": "eng"}, (1, 6)),
    ("ne-needs-the-key", {"team": {"$ne": "hr"}}, (1, 2, 3)),
    ("not-eq-includes-missing", {"$not": {"team": "hr"}}, (1, 2, 3, 5, 7)),
    ("numbers-3-is-3.0", {"score": 3.0}, (1,)),
    ("numbers-1e18-is-10**18", {"score": 10**18}, (3, 4)),
    ("booleans-are-not-numbers", {"draft": 0}, (3,)),
    ("false-is-not-0", {"draft": False}, (0,)),
    ("gte-number", {"year": {"$gte": 2024}}, (0, 2, 6)),
    ("range-any-element-per-operator", {"year": {"$gt": 2020, "$lt": 2024}}, (1, 6)),
    ("range-string-never-number", {"year": {"$lt": "2025"}}, (3,)),
    ("gt-number", {"score": {"$gt": 3}}, (0, 3, 4)),
    ("gt-exact-at-1e18", {"score": {"$gt": 1e18}}, ()),
    ("gt-exact-below-1e18", {"score": {"$gt": 10**18 - 1}}, (3, 4)),
    ("lte-negative", {"score": {"$lte": -1}}, (2,)),
    ("string-range-code-points", {"team": {"$gt": "Z"}}, (0, 1, 3, 4, 6)),
    ("string-range-window", {"team": {"$gte": "e", "$lt": "f"}}, (1, 6)),
    ("string-range-not-a-date", {"published": {"$gte": "2024"}}, (0, 2, 3)),
    ("date-gte", {"published": {"$gte": date(2024, 1, 1)}}, (0,)),
    ("date-lt", {"published": {"$lt": date(2024, 1, 1)}}, (1,)),
    ("date-eq", {"published": date(2024, 5, 1)}, (0,)),
    ("date-only-matches-dates", {"updated": {"$gte": date(2024, 5, 1)}}, (3,)),
    ("datetime-eq-is-the-instant", {"updated": datetime(2024, 5, 1, 8, tzinfo=UTC)}, (0, 1)),
    ("datetime-eq-other-offset", {"updated": {"$eq": datetime(2024, 5, 1, 10, tzinfo=_PLUS_TWO)}}, (0, 1)),
    ("datetime-gt-microsecond", {"updated": {"$gt": datetime(2024, 5, 1, 8, tzinfo=UTC)}}, (2,)),
    ("datetime-lt-offset", {"updated": {"$lt": datetime(2024, 5, 1, 8, tzinfo=UTC)}}, (4,)),
    ("datetime-in", {"updated": {"$in": [datetime(2024, 5, 1, 7, 59, 59, tzinfo=UTC), "2024-05-01"]}}, (3, 4)),
    ("list-eq-any-element", {"tags": "remote"}, (0, 1, 4)),
    ("list-in", {"tags": {"$in": ["policy", 3]}}, (0, 3)),
    ("list-true-is-not-1", {"tags": 1}, ()),
    ("list-true", {"tags": True}, (3,)),
    ("list-nin-none-equal", {"tags": {"$nin": ["remote"]}}, (2, 3)),
    ("list-ne-none-equal", {"tags": {"$ne": "remote"}}, (2, 3)),
    ("in-strings", {"team": {"$in": ["eng", "\u00e9"]}}, (1, 3, 6)),
    ("in-empty", {"team": {"$in": []}}, ()),
    ("nin-empty-needs-the-key", {"team": {"$nin": []}}, (0, 1, 2, 3, 4, 6)),
    ("ne-number", {"year": {"$ne": 2024}}, (1, 3, 6)),
    ("nin-numbers", {"year": {"$nin": [2024, 2023]}}, (3, 6)),
    ("exists", {"draft": {"$exists": True}}, (0, 1, 3)),
    ("not-exists", {"draft": {"$exists": False}}, (2, 4, 5, 6, 7)),
    ("or", {"$or": [{"team": "eng"}, {"year": {"$exists": False}}]}, (1, 4, 5, 6, 7)),
    ("and-not", {"$and": [{"team": "hr"}, {"$not": {"tags": "policy"}}]}, (4, 6)),
    ("entries-and-or", {"team": "hr", "$or": [{"year": 2024}, {"score": {"$gte": 1e18}}]}, (0, 4)),
    ("not-or", {"$not": {"$or": [{"team": "hr"}, {"team": "eng"}]}}, (2, 3, 5, 7)),
    ("hostile-key-is-just-a-key", {INJECTION_KEY: "v'; SELECT pg_sleep(5); --"}, (7,)),
    ("hostile-key-other-value", {INJECTION_KEY: {"$ne": "x"}}, (7,)),
    ("missing-key", {"nothing": "x"}, ()),
    ("not-missing-key", {"$not": {"nothing": {"$gt": 0}}}, _ALL),
)


def deep_filter(levels: int) -> dict[str, Any]:
    """A filter ``levels`` deep: ``{"$not": {"$not": ... {"team": "hr"}}}`` (one level is ``{"team": "hr"}``)."""
    nested: dict[str, Any] = {"team": "hr"}
    for _ in range(levels - 1):
        nested = {"$not": nested}
    return nested


# (id, filter): each must be a RagValidationError whose message starts with "Filter" and quotes nothing.
HOSTILE_FILTERS: tuple[tuple[str, Any], ...] = (
    ("too-deep", deep_filter(9)),
    ("far-too-deep", deep_filter(5_000)),
    ("in-10k", {"team": {"$in": [f"{CANARY}{i}" for i in range(10_000)]}}),
    ("nin-1001", {"team": {"$nin": list(range(1_001))}}),
    ("values-in-all", {"$or": [{f"k{i}": {"$in": list(range(1_000))}} for i in range(5)]}),
    ("too-many-conditions", {f"{CANARY}{i}": i for i in range(129)}),
    ("too-many-branches", {"$or": [{"team": CANARY} for _ in range(200)]}),
    ("unknown-operator", {"team": {"$regex": CANARY}}),
    ("unknown-top-level-operator", {"$where": CANARY}),
    ("unknown-operator-beside-known", {"team": {"$eq": "hr", f"${CANARY}": 1}}),
    ("dollar-key", {f"${CANARY}": "x"}),
    ("nul-in-key", {f"{CANARY}\x00": "x"}),
    ("nul-in-value", {"team": f"{CANARY}\x00"}),
    ("nul-in-in", {"team": {"$in": ["a", f"{CANARY}\x00"]}}),
    ("lone-surrogate-in-value", {"team": f"{CANARY}\ud800"}),
    ("lone-surrogate-in-key", {f"{CANARY}\udfff": "x"}),
    ("blank-key", {" ": CANARY}),
    ("non-string-key", {1: CANARY}),
    ("int-past-64-bits", {"score": {"$gt": 2**63}}),
    ("int-far-past-64-bits", {"score": 10**400}),
    ("nan", {"score": {"$lt": float("nan")}}),
    ("infinity", {"score": {"$gte": float("inf")}}),
    ("null", {"team": None}),
    ("list-value", {"team": [CANARY]}),
    ("mapping-value", {"team": {CANARY: 1}}),
    ("empty-operators", {"team": {}}),
    ("bytes", {"team": CANARY.encode()}),
    ("range-on-boolean", {"draft": {"$gt": False}}),
    ("naive-datetime", {"updated": {"$gt": datetime(2024, 5, 1)}}),
    ("second-offset", {"updated": datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30)))}),
    ("in-not-a-list", {"team": {"$in": CANARY}}),
    ("in-a-set", {"team": {"$in": {CANARY}}}),
    ("in-of-lists", {"team": {"$in": [[CANARY]]}}),
    ("exists-not-boolean", {"team": {"$exists": CANARY}}),
    ("and-empty", {"$and": []}),
    ("or-not-a-list", {"$or": {"team": CANARY}}),
    ("not-a-list", {"$not": [{"team": CANARY}]}),
    ("empty-inside-and", {"$and": [{}]}),
    ("not-a-mapping", [("team", CANARY)]),
)

_KEYS = ("team", "year", "score", "tags", "draft", "published", "updated", "nothing")
_OPERANDS: tuple[Any, ...] = (
    "hr",
    "eng",
    "Eng",
    "\u00e9",
    "remote",
    "policy",
    "2024",
    "2024-05-01",
    "Z",
    "",
    0,
    1,
    3,
    3.0,
    3.5,
    -1,
    2023,
    2024,
    2024.0,
    2030,
    10**18,
    1e18,
    True,
    False,
    date(2024, 1, 1),
    date(2024, 5, 1),
    datetime(2024, 5, 1, 8, tzinfo=UTC),
    datetime(2024, 5, 1, 10, tzinfo=_PLUS_TWO),
)


def random_filter(rng: random.Random, depth: int = 3) -> dict[str, Any]:
    """A valid filter over :data:`FILTER_ROWS`' keys and values (at most ``depth`` levels)."""
    roll = rng.random()
    if depth > 1 and roll < 0.25:
        name = rng.choice(("$and", "$or"))
        return {name: [random_filter(rng, depth - 1) for _ in range(rng.randint(1, 3))]}
    if depth > 1 and roll < 0.35:
        return {"$not": random_filter(rng, depth - 1)}
    return {rng.choice(_KEYS): _condition(rng)}


def _condition(rng: random.Random) -> Any:
    operand = rng.choice(_OPERANDS)
    op = rng.choice(("plain", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"))
    if op == "plain":
        return operand
    if op in ("$in", "$nin"):
        return {op: rng.sample(_OPERANDS, rng.randint(0, 4))}
    if op == "$exists":
        return {op: rng.random() < 0.5}
    if op in ("$gt", "$gte", "$lt", "$lte") and isinstance(operand, bool):
        return {op: 2024}
    return {op: operand}

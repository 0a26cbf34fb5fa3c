"""A parsed query analysed once, as every lexical store ranks it.

:func:`analyse_query` turns a :class:`~runiq.rag._lexical.query.LexicalQuery` into an
:class:`AnalysedQuery` with one :class:`~runiq.rag._lexical.tokenizer.Analyzer` (the store's). A store
analyses each query once and reads everything from the result; no store re-tokenises query text.
The semantics, the same in every store:

* **Terms** (BM25): the analyzer's query terms of the whole query, phrase words included, in query
  order, at most :data:`~runiq.rag._lexical.query.MAX_QUERY_TERMS` of them; stop words are dropped
  unless the query has nothing else (``to be or not to be``). Each distinct term is scored once,
  weighted by how often the query repeats it.
* **Phrases**: each quoted phrase is the sequence of its words' *analysed* whole-word terms (stemmed
  when the analyzer stems, stop words kept). A chunk holds a phrase when those terms occur at
  consecutive word positions of its indexed text (every word counts as a position; identifier parts
  never do). So with ``stemmer="english"`` the phrase ``"remote working"`` (``remot work``) matches
  "Remote work is allowed", as its words would match unquoted. A query with phrases returns only
  chunks holding every phrase, ranked by the BM25 of all its terms.
* **Fragment**: see :mod:`runiq.rag._lexical.fragments`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from runiq.rag._lexical.fragments import query_fragment
from runiq.rag._lexical.query import MAX_QUERY_TERMS, LexicalQuery
from runiq.rag._lexical.tokenizer import Analyzer

__all__ = ["AnalysedQuery", "analyse_query"]


@dataclass(frozen=True, slots=True)
class AnalysedQuery:
    """``terms[i]`` is weighted ``weights[i]`` (its query frequency); phrases are analysed terms."""

    terms: tuple[str, ...]
    weights: tuple[int, ...]
    phrases: tuple[tuple[str, ...], ...] = ()
    fragment: str | None = None

    @property
    def is_empty(self) -> bool:
        """Nothing to rank: no term and no phrase (such a query matches nothing)."""
        return not self.terms and not self.phrases

    @property
    def phrase_terms(self) -> tuple[str, ...]:
        """The distinct terms of every phrase: a chunk holding every phrase holds all of them."""
        return tuple(dict.fromkeys(term for phrase in self.phrases for term in phrase))


def analyse_query(query: LexicalQuery, analyzer: Analyzer) -> AnalysedQuery:
    counts = Counter(analyzer.query_terms(query.text)[:MAX_QUERY_TERMS])
    phrases = tuple(phrase for text in query.phrases if (phrase := tuple(analyzer.whole_terms(text))))
    return AnalysedQuery(
        terms=tuple(counts),  # first-occurrence order: scores are summed in it
        weights=tuple(counts.values()),
        phrases=phrases,
        fragment=query_fragment(analyzer.words(query.free_text), has_phrases=bool(phrases)),
    )

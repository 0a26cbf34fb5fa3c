"""Named stop word sets for the lexical analyzer.

Stop words carry almost no ranking signal in BM25 (their idf is near zero) but they lengthen every
document and every natural-language question. Dropping them is optional and applies only to plain
alphabetic tokens (see :class:`~runiq.rag._lexical.tokenizer.Analyzer`), so identifiers are never
affected. Phrase matching compares whole words and ignores this filter, so ``"to be or not to be"``
still matches in order.

``english`` is runiq's own list of English function words: articles, pronouns, auxiliaries,
prepositions, conjunctions and a few very common adverbs. It deliberately leaves out words that are
often content in technical text (``new``, ``first``, ``system``, ``use``).
"""

from __future__ import annotations

from collections.abc import Iterable

from runiq.rag._errors import RagConfigurationError

__all__ = ["ENGLISH_STOPWORDS", "STOPWORD_SETS", "resolve_stopwords"]

_ENGLISH_WORDS = """
    a an the
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    this that these those who whom whose which what
    am is are was were be been being have has had having do does did doing done
    will would shall should can could may might must ought
    of in on at by for with about against between into through during before after above below
    to from up down out off over under again further then once upon within without toward towards
    among amongst across along around behind beside besides beyond via per onto
    and but or nor if because as until while so than too very
    not no only own same such both each few more most other some any all
    here there when where why how also just even ever yet still
    s t d ll m o re ve y
"""
ENGLISH_STOPWORDS: frozenset[str] = frozenset(_ENGLISH_WORDS.split())

STOPWORD_SETS: dict[str, frozenset[str]] = {"none": frozenset(), "english": ENGLISH_STOPWORDS}


def resolve_stopwords(selection: str | Iterable[str] | None) -> frozenset[str]:
    """``"english"``, ``"none"``/``None``, or an explicit collection of words (case-folded)."""
    if selection is None:
        return frozenset()
    if isinstance(selection, str):
        words = STOPWORD_SETS.get(selection.casefold())  # no KeyError quoting the name to chain
        if words is None:
            names = ", ".join(sorted(STOPWORD_SETS))
            raise RagConfigurationError(f"Unknown stop word set; expected one of: {names}.")
        return words
    return frozenset(word.casefold() for word in selection)

"""Optional stemmers for the lexical analyzer (``stemmer="english"`` needs ``runiq[stemming]``).

Stemming is off by default: it helps natural-language questions over prose (``retrieval`` matches
``retrieving``) but it is language-specific. It applies to plain alphabetic tokens only, so
identifiers keep their exact spelling. The Snowball stemmers come from PyStemmer, whose stemmer
objects are not thread-safe, so each thread gets its own. Results are not memoised here: the
:class:`~runiq.rag._lexical.tokenizer.Analyzer` already analyses each distinct word once.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from runiq.errors import call_translated, replacing
from runiq.rag._errors import RagConfigurationError

__all__ = ["STEMMERS", "resolve_stemmer"]

STEMMERS = ("none", "english")


def _import_pystemmer() -> Any:
    import Stemmer  # optional: the 'stemming' extra

    return Stemmer


class _SnowballStemmer:
    def __init__(self, language: str) -> None:
        missing = RagConfigurationError(f"The '{language}' stemmer needs PyStemmer: pip install 'runiq[stemming]'.")
        stemmer = call_translated(_import_pystemmer, replacing(ImportError, missing))
        self._module: Any = stemmer  # PyStemmer
        self._language = language
        self._local = threading.local()

    def stem(self, word: str) -> str:
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            stemmer = self._local.stemmer = self._module.Stemmer(self._language)
        result: str = stemmer.stemWord(word)
        return result


@functools.cache
def resolve_stemmer(name: str) -> Callable[[str], str] | None:
    """``"none"`` -> no stemming; ``"english"`` -> a Snowball English stemmer."""
    key = name.casefold()
    if key == "none":
        return None
    if key == "english":
        return _SnowballStemmer("english").stem
    raise RagConfigurationError(f"Unknown stemmer; expected one of: {', '.join(STEMMERS)}.")

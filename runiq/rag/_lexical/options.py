"""Analyzer options shared by every store that ranks lexically (in-memory, PostgreSQL).

A store's ``stopwords`` and ``stemmer`` options are validated when the index is registered, so a
missing PyStemmer or an unknown name fails at startup, not on the first query.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from runiq.rag._lexical.stemming import resolve_stemmer
from runiq.rag._lexical.stopwords import resolve_stopwords
from runiq.rag._lexical.tokenizer import Analyzer

__all__ = ["DEFAULT_ANALYZER", "LexicalOptions", "StemmerName", "StopwordSetName"]

StopwordSetName = Literal["english", "none"]
StemmerName = Literal["none", "english"]


class LexicalOptions(BaseModel):
    """``stopwords="english"`` (the default, like bm25s) or ``"none"``; ``stemmer="none"`` or ``"english"``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stopwords: StopwordSetName = "english"
    stemmer: StemmerName = "none"

    @model_validator(mode="after")
    def _resolvable(self) -> LexicalOptions:
        resolve_stemmer(self.stemmer)  # raises a configuration error when PyStemmer is missing
        return self

    def analyzer(self) -> Analyzer:
        return Analyzer(stopwords=resolve_stopwords(self.stopwords), stemmer=resolve_stemmer(self.stemmer))

    @property
    def signature(self) -> str:
        """A stable description recorded with a durable index, so a changed analyzer is detected."""
        return f"runiq-lexical-v1;stopwords={self.stopwords};stemmer={self.stemmer}"


DEFAULT_ANALYZER = LexicalOptions().analyzer()

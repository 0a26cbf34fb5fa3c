"""Lexical retrieval: identifier-safe tokenisation, query parsing (phrase intent) and in-memory BM25."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq.rag._lazy import lazy_face
from runiq.rag._lexical.analysed import AnalysedQuery, analyse_query
from runiq.rag._lexical.options import DEFAULT_ANALYZER, LexicalOptions
from runiq.rag._lexical.query import LexicalQuery, parse_lexical_query
from runiq.rag._lexical.stemming import resolve_stemmer
from runiq.rag._lexical.stopwords import ENGLISH_STOPWORDS, resolve_stopwords
from runiq.rag._lexical.tokenizer import Analysis, Analyzer, primary_tokens, tokenize

if TYPE_CHECKING:
    from runiq.rag._lexical.bm25 import BM25Parameters, bm25_idf, bm25_length_norm, bm25_term_score
    from runiq.rag._lexical.engine import BM25Index

__all__ = [
    "DEFAULT_ANALYZER",
    "ENGLISH_STOPWORDS",
    "AnalysedQuery",
    "Analysis",
    "Analyzer",
    "BM25Index",
    "BM25Parameters",
    "LexicalOptions",
    "LexicalQuery",
    "analyse_query",
    "bm25_idf",
    "bm25_length_norm",
    "bm25_term_score",
    "parse_lexical_query",
    "primary_tokens",
    "resolve_stemmer",
    "resolve_stopwords",
    "tokenize",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute
    # These modules import numpy, which tokenising (the lexical-overlap reranker, a store's analyzer
    # options) does not need.
    __getattr__, __dir__ = lazy_face(__name__, __file__, __all__, globals())

"""Lexical retrieval: identifier-safe tokenisation, query parsing (phrase intent) and in-memory BM25."""

from __future__ import annotations

from runiq.rag.lexical.bm25 import BM25Index, BM25Parameters
from runiq.rag.lexical.query import LexicalQuery, parse_lexical_query
from runiq.rag.lexical.tokenizer import Analyzer, primary_tokens, tokenize

__all__ = [
    "Analyzer",
    "BM25Index",
    "BM25Parameters",
    "LexicalQuery",
    "parse_lexical_query",
    "primary_tokens",
    "tokenize",
]

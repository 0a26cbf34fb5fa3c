"""The binary tsvectors built in Python are exactly what PostgreSQL builds from the same literal."""

from __future__ import annotations

import pytest

from runiq.rag._lexical import LexicalOptions
from runiq_postgresql import PostgresVectorStore
from runiq_postgresql.lexical import chunk_terms, tsvector_literal

TEXTS = [
    "",
    "the of and",
    "Policy POL-HR-014 covers pol hr 014 policy",
    "it's a\\b 'quoted' \"double\" back\\\\slash",
    "Ünïcödé café naïve 東京 emoji 🚀 ß straße",
    "foo-bar bar bar IRagRetriever retriever rag",
    "filename.cs CS1503 v1.2.3 snake_case_name a.b.c",
    "word " * 300,
    "short " + "x" * 3000,
    " ".join(f"w{i}" for i in range(16390)) + " tail tail tail-end",
    " ".join(["filler"] * 1500) + " needle",
]


@pytest.mark.parametrize("stemmer", ["none", "english"])
async def test_binary_tsvectors_equal_the_servers_parse_of_their_literal(
    pg_store: PostgresVectorStore, stemmer: str
) -> None:
    """Sent in binary, every tsvector reads back as the literal renders it, and equals the literal parsed."""
    analyzer = LexicalOptions(stemmer=stemmer).analyzer()  # type: ignore[arg-type]
    async with pg_store.pool.acquire() as conn:
        for text in TEXTS:
            terms = chunk_terms(text, analyzer)
            literal = tsvector_literal(terms.tsvector)
            row = await conn.fetchrow(
                "SELECT $1::tsvector::text AS sent, $1::tsvector = $2::text::tsvector AS same, "
                "length($1::tsvector) AS lexemes",
                terms.tsvector,
                literal,
            )
            assert row["sent"] == literal, text[:40]
            assert row["same"], text[:40]
            assert row["lexemes"] == len(set(terms.lexemes)) == len(terms.lexemes)


async def test_a_tsvector_parameter_must_be_wire_format_bytes(pg_store: PostgresVectorStore) -> None:
    """A text literal is refused before it reaches the server: the codec only passes binary through."""
    async with pg_store.pool.acquire() as conn:
        with pytest.raises(Exception, match="binary wire format"):
            await conn.fetchval("SELECT $1::tsvector", "'a':1")

"""The analyzer options every lexical store accepts: validated at registration, identifier-safe."""

from __future__ import annotations

import sys

import pytest

from runiq.errors import RagConfigurationError
from runiq.rag._lexical import ENGLISH_STOPWORDS, LexicalOptions, resolve_stemmer, resolve_stopwords
from runiq.rag._lexical.stemming import _SnowballStemmer
from runiq.rag.testing.chains import assert_content_free


def test_defaults_drop_english_stop_words_and_do_not_stem() -> None:
    analyzer = LexicalOptions().analyzer()
    assert analyzer.stopwords == ENGLISH_STOPWORDS
    assert analyzer.stemmer is None
    assert analyzer.query_terms("What is the retention policy of POL-HR-014?") == [
        "retention",
        "policy",
        "pol-hr-014",
        "pol",
        "hr",
        "014",
    ]


def test_english_stemmer_conflates_inflections_but_never_identifiers() -> None:
    analyzer = LexicalOptions(stemmer="english").analyzer()
    assert analyzer.query_terms("retrieving retrieval") == analyzer.query_terms("retrieve retrievals")
    assert "filename.cs" in analyzer.query_terms("filename.cs")
    assert "cs1503" in analyzer.query_terms("CS1503 errors")


def test_unknown_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="stopwords"):
        LexicalOptions.model_validate({"stopwords": "klingon"})
    with pytest.raises(RagConfigurationError, match="Unknown stemmer"):
        resolve_stemmer("latin-ish")
    canary = "canary-stopwords-7f3a9c"
    with pytest.raises(RagConfigurationError, match="Unknown stop word set") as caught:
        resolve_stopwords(canary)
    assert caught.value.__context__ is None  # a KeyError would quote the name
    assert_content_free(caught.value, canary)
    assert resolve_stopwords(["The", "A"]) == frozenset({"the", "a"})
    assert resolve_stopwords(None) == frozenset()


def test_a_missing_pystemmer_is_a_configuration_error_that_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "Stemmer", None)  # makes ``import Stemmer`` fail
    with pytest.raises(RagConfigurationError, match=r"runiq\[stemming\]") as caught:
        _SnowballStemmer("english")
    assert caught.value.__context__ is None
    assert_content_free(caught.value)


def test_the_in_memory_store_validates_its_analyzer_options_at_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    from runiq.hosting import HostBuilder
    from runiq.rag import add_runiq_rag

    resolve_stemmer.cache_clear()
    monkeypatch.setitem(sys.modules, "Stemmer", None)
    builder = HostBuilder(load_entry_points=False)
    try:
        with pytest.raises(RagConfigurationError, match=r"stemmer.*runiq\[stemming\]"):
            add_runiq_rag(
                builder,
                lambda rag: rag.add_index(
                    "docs",
                    lambda index: index.use_default_mode("lexical").use_in_memory_vector_store(stemmer="english"),
                ),
            )
    finally:
        resolve_stemmer.cache_clear()

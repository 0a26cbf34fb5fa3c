"""Index names: trimmed, validated, unique; a rejected name leaves nothing registered."""

from __future__ import annotations

import pytest

from runiq.rag import HashingEmbedding, IndexBuilder, RagBuilder, RagConfigurationError


def _valid(index: IndexBuilder) -> None:
    index.use_directory("docs").use_embedding(HashingEmbedding(dimensions=32)).use_in_memory_vector_store()


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "\t\n",
        "has space",
        "a/b",
        "../up",
        "-leading-dash",
        ".hidden",
        "x" * 129,
        "ünïcode",
        None,
        7,
        b"bytes",
    ],
)
def test_invalid_index_names_are_rejected(rag: RagBuilder, name: object) -> None:
    """Empty, blank, badly formed, over-long and non-string names fail with RagConfigurationError."""
    with pytest.raises(RagConfigurationError, match="RAG index names must be"):
        rag.add_index(name, _valid)  # type: ignore[arg-type]
    assert rag.definitions == ()


def test_invalid_name_is_not_echoed(rag: RagBuilder) -> None:
    """The invalid-name message is fixed text: it does not repeat what the caller passed."""
    hostile = "sk-CANARY-0123 /etc/passwd"
    with pytest.raises(RagConfigurationError) as caught:
        rag.add_index(hostile, _valid)
    assert "CANARY" not in str(caught.value)
    assert "/etc/passwd" not in repr(caught.value)


@pytest.mark.parametrize("name", ["a", "docs", "Corporate-Documents_v2.1", "0-first-digit", "x" * 128])
def test_valid_index_names_are_accepted(rag: RagBuilder, name: str) -> None:
    """Letters, digits, '.', '_' and '-' up to 128 characters, starting with a letter or digit, are valid."""
    rag.add_index(name, _valid)
    assert [d.name for d in rag.definitions] == [name]


def test_index_names_are_trimmed(rag: RagBuilder) -> None:
    """Surrounding whitespace is removed before the name is validated and stored."""
    rag.add_index("  docs \n", _valid)
    assert [d.name for d in rag.definitions] == ["docs"]


@pytest.mark.parametrize("second", ["docs", " docs ", "docs\t"])
def test_duplicate_index_names_are_rejected(rag: RagBuilder, second: str) -> None:
    """A name already registered (after trimming) fails and keeps the first definition."""
    rag.add_index("docs", _valid)
    first = rag.definitions
    with pytest.raises(RagConfigurationError, match="RAG index 'docs' is already registered"):
        rag.add_index(second, _valid)
    assert rag.definitions == first


def test_names_are_case_sensitive(rag: RagBuilder) -> None:
    """Names compare ordinally: 'Docs' and 'docs' are two indexes."""
    rag.add_index("docs", _valid)
    rag.add_index("Docs", _valid)
    assert [d.name for d in rag.definitions] == ["docs", "Docs"]


def test_duplicate_name_is_detected_before_configure_runs(rag: RagBuilder) -> None:
    """A duplicate name fails before the configure callback is called."""
    rag.add_index("docs", _valid)
    called: list[str] = []
    with pytest.raises(RagConfigurationError):
        rag.add_index("docs", lambda index: called.append("configure"))
    assert called == []

"""Projection rules: redact, then normalise, then truncate by grapheme clusters with an ellipsis."""

from __future__ import annotations

import pytest

from runiq.rag import ContentPreviewOptions, RagConfigurationError, RagObservabilityOptions, RagQueryVisibility
from runiq.rag._observability import (
    DefaultObservabilityRedactor,
    ObservabilityProjector,
    RagObservabilityValueKind,
    normalise,
    truncate_graphemes,
)


class _Replace:
    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        return value.replace("secret", "safe")


class _Exploding:
    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        raise RuntimeError(value)


class _Omit:
    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        return None


def test_redaction_happens_before_normalisation_and_grapheme_truncation() -> None:
    """The reference example: "secret\\n👩🏽‍💻tail", secret->safe, max 5 -> "safe…"."""
    projector = ObservabilityProjector(RagObservabilityOptions(maximum_query_characters=5), _Replace())
    assert projector.query("secret\n👩🏽\u200d💻tail") == "safe…"


def test_truncation_counts_grapheme_clusters() -> None:
    """An emoji ZWJ sequence is one element; cutting keeps max-1 elements plus an ellipsis."""
    assert truncate_graphemes("approved title", 5) == ("appr…", True)
    assert truncate_graphemes("👩🏽\u200d💻👩🏽\u200d💻", 2) == ("👩🏽\u200d💻👩🏽\u200d💻", False)
    assert truncate_graphemes("ab👩🏽\u200d💻cd", 4) == ("ab👩🏽\u200d💻…", True)


def test_normalise_collapses_whitespace_control_and_format_characters() -> None:
    """Tabs, newlines, NUL, zero-width spaces collapse to one space and the ends are trimmed."""
    assert normalise("  a\t\n\x00b\u200bc  ") == "a b c"


@pytest.mark.parametrize(
    ("visibility", "expected"),
    [
        (RagQueryVisibility.VISIBLE, "find [EMAIL]"),
        (RagQueryVisibility.REDACTED, "[REDACTED]"),
        (RagQueryVisibility.HIDDEN, None),
    ],
)
def test_query_visibility(visibility: RagQueryVisibility, expected: str | None) -> None:
    """VISIBLE is redacted and bounded, REDACTED a placeholder, HIDDEN omitted."""
    projector = ObservabilityProjector(RagObservabilityOptions(query_visibility=visibility))
    assert projector.query("find bob@example.com") == expected


def test_visible_query_is_bounded_to_512_by_default() -> None:
    """A long query never exceeds the default 512 elements."""
    value = ObservabilityProjector().query("word " * 1000)
    assert value is not None and len(value) == 512 and value.endswith("…")


def test_failing_or_omitting_redactor_omits_the_value() -> None:
    """A redactor that raises or returns None never lets the raw value through."""
    options = RagObservabilityOptions(
        content_preview=ContentPreviewOptions(enabled=True, include_selected_results=True)
    )
    for redactor in (_Exploding(), _Omit()):
        projector = ObservabilityProjector(options, redactor)
        assert projector.query("raw query") is None
        assert projector.preview("raw content", selected=True) is None


def test_previews_are_off_by_default_and_follow_include_flags() -> None:
    """Previews need enabled plus the matching selected/rejected flag; they are bounded."""
    assert ObservabilityProjector().preview("content", selected=True) is None
    options = RagObservabilityOptions(
        content_preview=ContentPreviewOptions(enabled=True, maximum_characters=160, include_selected_results=True)
    )
    projector = ObservabilityProjector(options)
    assert projector.preview("content", selected=False) is None
    preview = projector.preview("word " * 500, selected=True)
    assert preview is not None and len(preview) == 160 and preview.endswith("…")


def test_metadata_only_for_allow_listed_keys_sorted_and_limited() -> None:
    """Only safe keys appear, ordered by key, at most metadata_entry_limit, values truncated."""
    options = RagObservabilityOptions(
        safe_metadata_keys=frozenset({"title", "team", "year"}), metadata_entry_limit=2, maximum_metadata_value_length=5
    )
    projected = ObservabilityProjector(options).metadata(
        {"title": "approved title", "secret": "hidden", "team": "blue", "year": 2024}
    )
    assert projected == {"team": "blue", "title": "appr…"}


def test_default_redactor_masks_emails_keys_paths_and_numbers_but_keeps_identifiers() -> None:
    """Leaks are masked; identifiers such as CS1503 and POL-HR-014 stay readable."""
    text = (
        "mail bob@example.com key sk-abcdef1234567890 at /home/alice/secret/notes.md "
        "card 4111 1111 1111 1111 password=hunter2 errors CS1503 POL-HR-014"
    )
    redacted = DefaultObservabilityRedactor().redact(text, RagObservabilityValueKind.CONTENT)
    assert redacted is not None
    for leak in ("bob@example.com", "sk-abcdef", "/home/alice", "4111", "hunter2"):
        assert leak not in redacted
    assert "CS1503" in redacted and "POL-HR-014" in redacted


@pytest.mark.parametrize(
    "kwargs",
    [
        {"maximum_query_characters": 0},
        {"redacted_query_placeholder": " "},
        {"metadata_entry_limit": 33},
        {"maximum_metadata_value_length": 513},
        {"safe_metadata_keys": frozenset({" "})},
    ],
)
def test_invalid_observability_options_are_rejected(kwargs: dict[str, object]) -> None:
    """Options outside the hard limits fail at construction."""
    with pytest.raises(RagConfigurationError):
        RagObservabilityOptions(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"maximum_characters": 2001},
        {"maximum_characters": 0},
        {"include_selected_results": True},
        {"enabled": True},
    ],
)
def test_invalid_preview_options_are_rejected(kwargs: dict[str, object]) -> None:
    """Preview length is 1..2000; flags need enabled; enabled needs a flag."""
    with pytest.raises(RagConfigurationError):
        ContentPreviewOptions(**kwargs)  # type: ignore[arg-type]

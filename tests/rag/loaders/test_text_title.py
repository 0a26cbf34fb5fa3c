"""A plain-text file's first line is its title only when it is laid out and worded as a heading."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag._chunking.context import chunk_context
from runiq.rag._loaders import LoadOptions, PlainTextLoader
from runiq.rag._loaders.text_title import MAX_TITLE_WORDS, plain_text_title

BODY = "The present study is a history of the classification.\nIt has run to eighteen editions.\n"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (f"Editions of the Decimal Classification\n\n{BODY}", "Editions of the Decimal Classification"),
        (f"Remote work policy\r\n\r\n{BODY}", "Remote work policy"),  # Windows line ends
        (f"\n\n   Remote   work\tpolicy  \n\n\n{BODY}", "Remote work policy"),  # leading blank lines, spacing
        (f"Remote work policy\n==================\n{BODY}", "Remote work policy"),  # Setext / reST underline
        (f"Installation\n------------\n\n{BODY}", "Installation"),
        (f"Why index titles?\n\n{BODY}", "Why index titles?"),  # a question heads its answer
        (f"ITEM 1A. RISK FACTORS\n\n{BODY}", "ITEM 1A. RISK FACTORS"),  # a period inside is fine
        (f"\u201cQuoted\u201d Works of 1971\n\n{BODY}", "\u201cQuoted\u201d Works of 1971"),
        (f"(Draft) Travel rules\n\n{BODY}", "(Draft) Travel rules"),
        (f"Überblick über die Straße\n\n{BODY}", "Überblick über die Straße"),
    ],
)
def test_a_heading_like_first_line_is_the_title(text: str, title: str) -> None:
    assert plain_text_title(text) == title


@pytest.mark.parametrize(
    "text",
    [
        f"This is the first sentence.\n\n{BODY}",  # a sentence
        f'He said "stop."\n\n{BODY}',  # a sentence ending inside quotes
        f"He said \u201cstop.\u201d)\n\n{BODY}",
        f"Watch out!\n\n{BODY}",
        f"Dear team,\n\n{BODY}",  # a salutation
        f"You will need the following:\n\n{BODY}",  # a lead-in to a list
        f"The first line of a hard-wrapped paragraph that goes on\nonto the next line and the next.\n\n{BODY}",
        f"From: alice@example.com\nTo: bob@example.com\n\n{BODY}",  # headers run on
        f"- buy milk\n\n{BODY}",  # a bullet
        f"# a comment\n\n{BODY}",
        f"2024-01-01 12:00:00\n\n{BODY}",  # mostly digits
        f"==========\n\n{BODY}",  # a rule
        f"{' '.join(['word'] * (MAX_TITLE_WORDS + 1))}\n\n{BODY}",  # too many words
        f"{'Longword' * 30}\n\n{BODY}",  # too many characters
        f"A title\nwith a second line\n\n{BODY}",
        f"Title\n- not an underline -\n{BODY}",
        "Title alone\n",  # nothing follows: the whole document, not its title
        "Title\n\n   \n\t\n",
        "",
        "\n\n\n",
    ],
)
def test_other_first_lines_are_not_titles(text: str) -> None:
    assert plain_text_title(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "x" * 5_000_000 + "\n\nbody",  # a huge first line
        "A title" + " " * 5_000_000 + "\n\nbody",  # huge trailing spacing: past the head
        "\n" * 5_000_000 + "Title\n\nbody",  # the first line beyond the head
        "\ufffd\ufffd\ufffd\ufffdab\ufffd\n\nbody",  # mojibake
        "Ti\x07tle\n\nbody",  # a control character
        "Title\x00\n\nbody",
        "\u202eeltiT\n\nbody",  # a bidi override (a format character)
    ],
)
def test_hostile_first_lines_are_not_titles(text: str) -> None:
    assert plain_text_title(text) is None


@given(st.text(max_size=400))
def test_any_title_is_one_short_line_from_the_start_of_the_text(text: str) -> None:
    title = plain_text_title(text)
    if title is not None:
        assert title == " ".join(title.split()) and title
        assert "\n" not in title and len(title.split()) <= MAX_TITLE_WORDS
        assert title.split()[0] in text[:1024]


def test_the_text_loader_sets_the_title_and_keeps_the_text() -> None:
    data = f"Remote work policy\n\n{BODY}".encode()
    document = PlainTextLoader().load(data, options=LoadOptions())
    assert (document.title, document.text) == ("Remote work policy", data.decode())


def test_a_detected_title_is_carried_into_later_chunks_only() -> None:
    """The first chunk holds its title already; a later chunk is indexed under it."""
    metadata = {"title": "Remote work policy"}
    assert chunk_context("0042.txt", f"Remote work policy\n\n{BODY}", metadata) == ""
    assert chunk_context("0042.txt", "Eligibility is decided per team.", metadata) == "Remote work policy"

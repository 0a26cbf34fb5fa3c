"""identity_hash: the one hash that names a document, a source or a hit wherever its id must not appear."""

from __future__ import annotations

import hashlib

import pytest

from runiq.rag.providers import identity_hash


def test_the_hash_is_16_lower_case_hex_digits_of_sha256() -> None:
    """The definition, pinned: an operator can compute it with any SHA-256 tool (``sha256sum``)."""
    assert identity_hash("docs/a.md") == hashlib.sha256(b"docs/a.md").hexdigest()[:16]
    assert identity_hash("docs/a.md") == "5231f8a11b65145a"  # a changed value would orphan old log lines


def test_parts_are_joined_by_the_unit_separator() -> None:
    """A hit is ``identity_hash(document_id, chunk_id)``: distinct from the document's own hash."""
    assert identity_hash("a", "b") == hashlib.sha256(b"a\x1fb").hexdigest()[:16]
    assert identity_hash("a", "b") != identity_hash("ab")
    assert identity_hash("a", "b") != identity_hash("a")


def test_a_lone_surrogate_hashes_instead_of_raising() -> None:
    """A file name read with ``surrogateescape`` still gets a hash (plain UTF-8 encoding would raise)."""
    assert identity_hash("bad \udc80 name") == hashlib.sha256(b"bad \xed\xb2\x80 name").hexdigest()[:16]


def test_no_parts_is_an_error() -> None:
    """Hashing nothing would give every caller the same value; it is refused."""
    with pytest.raises(ValueError, match="at least one part"):
        identity_hash()

"""Content fingerprints for duplicate filtering: a normalised-text hash and word-shingle sets."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["ContentFingerprint", "fingerprint", "jaccard", "normalise_text"]

_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def normalise_text(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space, trimmed."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@dataclass(frozen=True, slots=True)
class ContentFingerprint:
    digest: str  # SHA-256 of the normalised text
    shingles: frozenset[tuple[str, ...]]


def fingerprint(text: str, shingle_size: int) -> ContentFingerprint:
    """Shingles are runs of ``shingle_size`` words (punctuation ignored); a shorter text is one shingle."""
    normalised = normalise_text(text)
    words = _WORD.findall(normalised)
    if len(words) <= shingle_size:
        shingles = frozenset({tuple(words)}) if words else frozenset()
    else:
        shingles = frozenset(tuple(words[i : i + shingle_size]) for i in range(len(words) - shingle_size + 1))
    return ContentFingerprint(hashlib.sha256(normalised.encode("utf-8")).hexdigest(), shingles)


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)

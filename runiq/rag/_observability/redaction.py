"""The redactor boundary and a default implementation.

The default masks what most often turns a preview into a leak: e-mail addresses, long digit runs
(card, account and phone numbers), key-like tokens (``sk-...``, ``ghp_...``, long hex/base64 runs,
``password=...`` assignments) and file-system paths. It is a safety net, not a guarantee: hosts with
stricter needs register their own :class:`RagObservabilityRedactor`.

Every rule runs in time linear in the input: a match may only start where its run of characters
starts (a lookbehind), runs are consumed possessively (no backtracking into them), and the long
mixed token rule checks its condition in Python instead of with nested quantifiers. The projector
also bounds what it hands to any redactor (see :mod:`runiq.rag._observability.projection`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import Protocol, runtime_checkable

__all__ = ["DefaultObservabilityRedactor", "RagObservabilityRedactor", "RagObservabilityValueKind"]


class RagObservabilityValueKind(StrEnum):
    QUERY = "query"
    CONTENT = "content"
    METADATA = "metadata"


@runtime_checkable
class RagObservabilityRedactor(Protocol):
    """Return the value to show, or ``None`` to omit it. Exceptions omit the value too."""

    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None: ...


def _any_case(word: str) -> str:
    """``"Key"`` -> ``"[Kk][Ee][Yy]"``: ASCII case-insensitive without ``(?i)``, which makes ``re`` 3x slower."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


_KEYWORDS = "|".join(
    [*map(_any_case, ("password", "passwd", "secret", "token")), f"{_any_case('api')}[_-]?{_any_case('key')}"]
)
_KEYLIKE = r"A-Za-z0-9+/_-"
# Anchored at the start (``match``): up to the first digit, then up to the first letter after it.
_DIGIT_THEN_LETTER = re.compile(r"[^0-9]*+[0-9][^A-Za-z]*+[A-Za-z]")
_MIXED_TAIL = 22  # characters a key-like token needs after its first letter that follows a digit


def _mixed_token(match: re.Match[str]) -> str:
    """``[KEY]`` for a run holding a digit, later a letter, and at least 22 characters after that letter."""
    token = match.group(0)
    body = token.rstrip("=")
    found = _DIGIT_THEN_LETTER.match(body)
    return "[KEY]" if found and len(body) - found.end() >= _MIXED_TAIL else token


Replacement = str | Callable[[re.Match[str]], str]

_RULES: tuple[tuple[re.Pattern[str], Replacement], ...] = (
    (re.compile(rf"\b({_KEYWORDS})\s*+[:=]\s*+\S++"), r"\1=[REDACTED]"),
    # Addresses glued together ("a@x.org+b@y.org") are one match: a match can only start where a run starts.
    (re.compile(r"(?<![\w.+-])(?:[\w.+-]++@[\w-]++(?:\.[\w-]++)++)++"), "[EMAIL]"),
    (re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{8,}+"), "[KEY]"),
    # A whole run from its first word boundary; _mixed_token decides (nested quantifiers were cubic here).
    (re.compile(rf"\b[{_KEYLIKE}]{{24,}}+={{0,2}}+"), _mixed_token),
    (re.compile(r"(?:[A-Za-z]:\\|\\\\|~/|/)(?:[\w.@-]++[\\/])++[\w.@-]*+"), "[PATH]"),
    (re.compile(r"(?<!\w)\w++://\S++"), "[URL]"),
    (re.compile(r"\d(?:[ -]?+\d){5,}+"), "[NUMBER]"),
)


class DefaultObservabilityRedactor:
    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        for pattern, replacement in _RULES:
            value = pattern.sub(replacement, value)
        return value

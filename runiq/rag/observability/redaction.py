"""The redactor boundary and a default implementation.

The default masks what most often turns a preview into a leak: e-mail addresses, long digit runs
(card, account and phone numbers), key-like tokens (``sk-...``, ``ghp_...``, long hex/base64 runs,
``password=...`` assignments) and file-system paths. It is a safety net, not a guarantee: hosts with
stricter needs register their own :class:`RagObservabilityRedactor`.
"""

from __future__ import annotations

import re
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


_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(password|passwd|secret|token|api[_-]?key)\s*[:=]\s*\S+"), r"\1=[REDACTED]"),
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[EMAIL]"),
    (re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{8,}"), "[KEY]"),
    (re.compile(r"\b[A-Za-z0-9+/_-]*\d[A-Za-z0-9+/_-]*[A-Za-z][A-Za-z0-9+/_-]{22,}={0,2}"), "[KEY]"),
    (re.compile(r"(?:[A-Za-z]:\\|\\\\|~/|/)(?:[\w.@-]+[\\/])+[\w.@-]*"), "[PATH]"),
    (re.compile(r"(?:\w+://)[^\s]+"), "[URL]"),
    (re.compile(r"\d(?:[ -]?\d){5,}"), "[NUMBER]"),
)


class DefaultObservabilityRedactor:
    def redact(self, value: str, kind: RagObservabilityValueKind) -> str | None:
        for pattern, replacement in _RULES:
            value = pattern.sub(replacement, value)
        return value

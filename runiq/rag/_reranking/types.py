"""The reranker boundary: request and response types and the :class:`RagReranker` protocol.

A reranker is a second-stage scorer. It receives the query and a bounded, ordered list of accepted
candidates and returns one higher-is-better relevance in [0, 1] plus an answerability signal per
candidate, and an aggregate :class:`RagAnswerability`. Everything else (how many candidates, the
timeout, what happens on failure, whether answerability is enforced) belongs to the context policy
in :mod:`runiq.rag._context`, not to the reranker.

Content safety: the query and candidate content are untrusted data. A reranker uses them for scoring
only. One that builds a prompt (an LLM judge) must place them in a user/data message, never in
system or developer instructions, and must not log them, copy them into exceptions or hand them to
observability. ``repr()`` of these types omits the query and the content for the same reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from runiq.errors import RagValidationError
from runiq.rag._documents import ChunkKey

__all__ = [
    "MAX_RERANK_CANDIDATES",
    "RagAnswerability",
    "RagRerankCandidate",
    "RagRerankCandidateResult",
    "RagRerankRequest",
    "RagRerankResponse",
    "RagReranker",
]

# An upper bound on one request, so a misconfigured policy cannot ship a whole index off-host.
MAX_RERANK_CANDIDATES = 1000


class RagAnswerability(StrEnum):
    """Whether the candidates (or one candidate) can answer the query, according to the reranker."""

    UNKNOWN = "unknown"  # the reranker gives no signal (the default)
    ANSWERABLE = "answerable"
    NOT_ANSWERABLE = "not_answerable"


def _identity(document_id: object, chunk_id: object) -> None:
    if not isinstance(document_id, str) or not document_id.strip():
        raise RagValidationError("A rerank candidate needs a non-empty document_id.")
    if not isinstance(chunk_id, str) or not chunk_id.strip():
        raise RagValidationError("A rerank candidate needs a non-empty chunk_id.")


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankCandidate:
    """One accepted chunk sent for reranking. ``original_rank`` is its one-based accepted rank."""

    document_id: str
    chunk_id: str
    content: str = field(repr=False)
    original_rank: int

    def __post_init__(self) -> None:
        _identity(self.document_id, self.chunk_id)
        if not isinstance(self.content, str):
            raise RagValidationError("A rerank candidate's content must be a string.")
        if isinstance(self.original_rank, bool) or not isinstance(self.original_rank, int) or self.original_rank < 1:
            raise RagValidationError("A rerank candidate's original_rank must be a positive integer.")

    @property
    def key(self) -> ChunkKey:
        return ChunkKey(self.document_id, self.chunk_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankRequest:
    """The query and 1..``MAX_RERANK_CANDIDATES`` candidates with unique identities and ranks, best first."""

    query: str = field(repr=False)
    candidates: tuple[RagRerankCandidate, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise RagValidationError("A rerank request needs a non-empty query.")
        candidates = tuple(self.candidates)
        if not candidates:
            raise RagValidationError("A rerank request needs at least one candidate.")
        if len(candidates) > MAX_RERANK_CANDIDATES:
            raise RagValidationError(f"A rerank request holds at most {MAX_RERANK_CANDIDATES} candidates.")
        if not all(isinstance(c, RagRerankCandidate) for c in candidates):
            raise RagValidationError("Rerank candidates must be RagRerankCandidate objects.")
        if len({c.key for c in candidates}) != len(candidates):
            raise RagValidationError("Rerank candidate identities must be unique.")
        if len({c.original_rank for c in candidates}) != len(candidates):
            raise RagValidationError("Rerank candidate original ranks must be unique.")
        object.__setattr__(self, "candidates", candidates)

    @property
    def keys(self) -> tuple[ChunkKey, ...]:
        return tuple(c.key for c in self.candidates)


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankCandidateResult:
    """The reranker's verdict on one requested identity: relevance in [0, 1], higher is better.

    Not validated on construction: :func:`~runiq.rag._reranking.validate_rerank_response` checks the
    whole response at once, so a bad value is a contract failure rather than a provider exception.
    """

    document_id: str
    chunk_id: str
    relevance: float
    answerability: RagAnswerability = RagAnswerability.UNKNOWN

    @property
    def key(self) -> ChunkKey:
        return ChunkKey(self.document_id, self.chunk_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankResponse:
    """One result per requested identity, in any order, and the aggregate answerability."""

    candidates: tuple[RagRerankCandidateResult, ...]
    answerability: RagAnswerability = RagAnswerability.UNKNOWN

    def __post_init__(self) -> None:
        if isinstance(self.candidates, Sequence) and not isinstance(self.candidates, str | bytes):
            object.__setattr__(self, "candidates", tuple(self.candidates))


@runtime_checkable
class RagReranker(Protocol):
    """A second-stage reranker.

    ``provider_name`` is a safe display name used in errors and logs. ``remote`` declares data egress:
    ``True`` when the query or content leave the process (an HTTP API), ``False`` for in-process
    models. A remote reranker is used only when the host approved it (see
    :class:`~runiq.rag._reranking.RerankerRegistration`); an object that does not say is treated as remote.

    ``rerank`` must return a :class:`RagRerankResponse` naming every requested identity exactly once.
    It may be cancelled at any await (the policy's timeout); it should not catch ``CancelledError``.
    """

    @property
    def provider_name(self) -> str: ...

    @property
    def remote(self) -> bool: ...

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse: ...

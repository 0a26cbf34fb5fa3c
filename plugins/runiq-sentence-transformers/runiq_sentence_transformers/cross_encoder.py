"""A local cross-encoder reranker: sentence-transformers' ``CrossEncoder`` from a local directory.

Registered as the ``sentence-transformers`` reranker provider, in process (``remote = False``: nothing
leaves the host, so no egress approval is needed)::

    index.use_reranker(CrossEncoderReranking(model_path="/models/ms-marco-MiniLM-L6-v2"))

Loading follows the embedder's rules (:mod:`runiq_sentence_transformers.loading`): ``model_path`` must
be an existing local model directory (a hub name or URL is refused, never downloaded), and the model
is loaded with ``local_files_only=True`` and ``trust_remote_code=False``. No cross-encoder ships with
the plugin. The model must produce one score per pair (``num_labels=1``).

Scores: the model's raw logit for each (query, content) pair, mapped to [0, 1] with the sigmoid
``1 / (1 + exp(-x))`` (computed as ``(1 + tanh(x / 2)) / 2``, which cannot overflow). runiq asks for
the logit (an identity ``activation_fn``) and applies the sigmoid itself, so the mapping does not depend
on the activation a model directory happens to configure (some save ``Identity``, and their ``predict``
returns logits); for a single-label model that configures none it equals ``CrossEncoder.predict``'s
default. It is the same mapping runiq-rerank-http applies to TEI's logits.
The sigmoid keeps the model's order; whether a score is calibrated is the model's property, not a
claim of this plugin. Answerability is ``UNKNOWN`` for every candidate (a relevance model gives no
such signal).

Prediction runs in a worker thread (``asyncio.to_thread``), one at a time per model (torch already
spreads one call over every core); the lock is taken inside the thread, so a call cancelled by the
policy's deadline does not let the next one start beside it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from runiq.errors import ProviderError, ProviderUnavailableError, RagConfigurationError, call_translated, invalid_fields
from runiq.logging import get_logger
from runiq.rag.providers import RagAnswerability, RagRerankCandidateResult, RagRerankRequest, RagRerankResponse

from runiq_sentence_transformers.loading import resolve_model_path
from runiq_sentence_transformers.options import (
    DEVICE_PATTERN,
    PROVIDER_NAME,
    SentenceTransformerOptions,
    local_model_path,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from sentence_transformers import CrossEncoder

__all__ = [
    "CrossEncoderOptions",
    "CrossEncoderReranker",
    "CrossEncoderReranking",
    "load_cross_encoder",
    "open_cross_encoder",
    "sigmoid",
]

log = get_logger(__name__)


class CrossEncoderOptions(BaseModel):
    """Options of one local cross-encoder. Whether ``model_path`` exists is checked when it opens."""

    # hide_input_in_errors: a ValidationError must not quote a value (paths are not for error text).
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model_path: str
    device: str = Field(default="cpu", pattern=DEVICE_PATTERN)
    batch_size: int = Field(default=32, ge=1, le=4096)
    max_length: int | None = Field(default=None, ge=8, le=8192)  # tokens per pair; None: the model's own
    model_name: str | None = Field(default=None, pattern=r"^\S.{0,255}$")

    @field_validator("model_path", mode="before")
    @classmethod
    def _local_path(cls, value: Any) -> Any:
        return local_model_path(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossEncoderReranking:
    """Select a local cross-encoder: ``index.use_reranker(CrossEncoderReranking(model_path=...))``.

    Args:
        model_path: a local cross-encoder directory (required; hub names are refused).
        device: ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"``, ``"mps"``.
        batch_size: pairs per forward pass.
        max_length: tokens per (query, content) pair, longer pairs truncated; ``None`` is the model's.
        model_name: a display name; defaults to the directory name.
    """

    model_path: str | Path
    device: str = "cpu"
    batch_size: int = 32
    max_length: int | None = None
    model_name: str | None = None

    def __post_init__(self) -> None:
        self.options()  # validate now, so a bad selection fails where it is written

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        # Safe display metadata: never the path itself.
        return f"Sentence Transformers cross-encoder {self.model_name or 'local model'} ({self.device})"

    def provider_options(self) -> dict[str, object]:
        return {
            "model_path": str(self.model_path),
            "device": self.device,
            "batch_size": self.batch_size,
            "max_length": self.max_length,
            "model_name": self.model_name,
        }

    def options(self) -> CrossEncoderOptions:
        # Raised outside ``except``: the ValidationError holds the values (a model path) as input.
        return call_translated(
            lambda: CrossEncoderOptions.model_validate(self.provider_options()),
            invalid_fields("Invalid sentence-transformers cross-encoder selection"),
        )


def sigmoid(logits: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``1 / (1 + exp(-x))`` elementwise, as ``(1 + tanh(x / 2)) / 2``: no overflow, exactly 0.5 at 0."""
    import numpy as np  # here, not at import: registering the provider does not need numpy

    values = np.asarray(logits, dtype=np.float64)
    return 0.5 * (1.0 + np.tanh(0.5 * values))


class CrossEncoderReranker:
    """A :class:`~runiq.rag.RagReranker` over a loaded ``CrossEncoder``. Local: ``remote`` is ``False``."""

    provider_name = PROVIDER_NAME
    remote = False

    def __init__(self, model: CrossEncoder, *, batch_size: int = 32) -> None:
        self._model = model
        self._batch_size = batch_size
        self._lock = threading.Lock()

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        pairs = [(request.query, candidate.content) for candidate in request.candidates]
        relevances = await asyncio.to_thread(self.score_sync, pairs)
        results = tuple(
            RagRerankCandidateResult(
                document_id=candidate.document_id,
                chunk_id=candidate.chunk_id,
                relevance=float(relevance),
                answerability=RagAnswerability.UNKNOWN,
            )
            for candidate, relevance in zip(request.candidates, relevances, strict=True)
        )
        return RagRerankResponse(candidates=results, answerability=RagAnswerability.UNKNOWN)

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Blocking: the sigmoid of the model's logit for each pair, in order."""
        with self._lock:
            logits = self._logits(pairs)
        if logits is None or logits.shape != (len(pairs),):
            raise ProviderError(PROVIDER_NAME, "the cross-encoder failed to score the candidates")
        return sigmoid(logits)

    def _logits(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64] | None:
        import numpy as np

        try:
            raw = self._model.predict(
                list(pairs),
                batch_size=self._batch_size,
                activation_fn=_identity,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            return np.asarray(raw, dtype=np.float64).reshape(-1)
        except Exception as exc:  # the exception text may quote the input; keep only its type
            error = type(exc).__name__
        log.warning("sentence_transformers.cross_encoder_failed", provider=PROVIDER_NAME, error=error)
        return None


def _identity(logits: Any) -> Any:
    """``predict``'s activation: none, so it returns the logits (torch.nn.Identity without importing torch)."""
    return logits


def load_cross_encoder(path: Path, options: CrossEncoderOptions) -> CrossEncoder:
    """Load the cross-encoder at ``path`` (blocking).

    Raises:
        ProviderUnavailableError: the files do not load (broken, or the device is unavailable).
        RagConfigurationError: the model gives more than one score per pair.
    """
    from sentence_transformers import CrossEncoder  # torch is imported only when a model is needed

    model: CrossEncoder | None = None
    error = None
    try:
        model = CrossEncoder(
            str(path),
            device=options.device,
            max_length=options.max_length,
            local_files_only=True,
            trust_remote_code=False,
        )
    except Exception as exc:  # broken files, an unavailable device: the caller learns the category only
        error = type(exc).__name__
    if model is None:
        log.warning("sentence_transformers.cross_encoder_load_failed", provider=PROVIDER_NAME, error=error)
        raise ProviderUnavailableError(PROVIDER_NAME, "the local cross-encoder could not be loaded")
    if model.num_labels != 1:
        raise RagConfigurationError("A cross-encoder reranker needs a model with one score per pair (num_labels=1).")
    return model


@asynccontextmanager
async def open_cross_encoder(options: CrossEncoderOptions) -> AsyncIterator[CrossEncoderReranker]:
    """Check the local path and load the model in a worker thread; it is released when the host stops.

    Raises:
        RagConfigurationError: ``model_path`` is not an existing local model directory, or the model
            is not a single-score cross-encoder.
        ProviderUnavailableError: the model could not be loaded.
    """
    local = SentenceTransformerOptions(model_path=options.model_path)  # the embedder's path rules, reused
    path = await asyncio.to_thread(resolve_model_path, local)
    model = await asyncio.to_thread(load_cross_encoder, path, options)
    yield CrossEncoderReranker(model, batch_size=options.batch_size)

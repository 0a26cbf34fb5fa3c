"""The typed selection ``SentenceTransformerEmbedding(...)``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runiq.errors import call_translated, invalid_fields

from runiq_sentence_transformers.options import PACKAGED_MODEL_NAME, PROVIDER_NAME, SentenceTransformerOptions

__all__ = ["SentenceTransformerEmbedding"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SentenceTransformerEmbedding:
    """Select a local sentence-transformers model: ``index.use_embedding(SentenceTransformerEmbedding())``.

    Args:
        model_path: a local model directory; ``None`` is the packaged all-MiniLM-L6-v2 (384 dimensions).
            Hub names are refused: nothing is downloaded.
        device: ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"``, ``"mps"``.
        batch_size: texts per forward pass inside one encode.
        normalize: L2-normalise the vectors (cosine and dot product then agree).
        model_name: the identity recorded with the index; defaults to the directory name.
    """

    model_path: str | Path | None = None
    device: str = "cpu"
    batch_size: int = 32
    normalize: bool = True
    model_name: str | None = None

    def __post_init__(self) -> None:
        self.options()  # validate now, so a bad selection fails where it is written

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        # Safe display metadata: never the path itself.
        name = self.model_name or (PACKAGED_MODEL_NAME if self.model_path is None else "local model")
        return f"Sentence Transformers {name} ({self.device})"

    def provider_options(self) -> dict[str, object]:
        return {
            "model_path": None if self.model_path is None else str(self.model_path),
            "device": self.device,
            "batch_size": self.batch_size,
            "normalize": self.normalize,
            "model_name": self.model_name,
        }

    def options(self) -> SentenceTransformerOptions:
        # Raised outside ``except``: the ValidationError holds the values (a path, a URL) as input.
        return call_translated(
            lambda: SentenceTransformerOptions.model_validate(self.provider_options()),
            invalid_fields("Invalid sentence-transformers selection"),
        )

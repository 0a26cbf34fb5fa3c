"""Ray errors as runiq errors, without Ray's remote traceback."""

from __future__ import annotations

from runiq.errors import ProviderError, ProviderUnavailableError, RagConfigurationError
from runiq.logging import get_logger

from runiq_ray.options import PROVIDER_NAME
from runiq_ray.worker import WorkerFailure

__all__ = ["cluster_unavailable", "worker_failed"]

log = get_logger(__name__)


def worker_failed(exc: Exception) -> Exception:
    """A worker's :class:`WorkerFailure` keeps its kind; Ray's own errors (a dead actor) keep a type name."""
    cause = getattr(exc, "cause", None)
    log.warning("ray.worker_failed", provider=PROVIDER_NAME, error=type(exc).__name__, cause=type(cause).__name__)
    if isinstance(cause, WorkerFailure):
        if cause.configuration:
            return RagConfigurationError(cause.message)
        detail = f"{cause.kind}: {cause.message}" if cause.message else cause.kind
        return ProviderError(PROVIDER_NAME, f"a Ray worker failed to embed the batch ({detail})")
    return ProviderError(PROVIDER_NAME, f"a Ray worker failed to embed the batch ({type(exc).__name__})")


def cluster_unavailable(exc: Exception) -> Exception:
    log.warning("ray.cluster_unavailable", provider=PROVIDER_NAME, error=type(exc).__name__)
    return ProviderUnavailableError(PROVIDER_NAME, f"could not start or reach the Ray cluster ({type(exc).__name__})")

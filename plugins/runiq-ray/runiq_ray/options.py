"""The validated options of the ``ray`` embedding provider."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PROVIDER_NAME", "RayEmbeddingOptions"]

PROVIDER_NAME = "ray"


class RayEmbeddingOptions(BaseModel):
    """Where the actors run and which embedding provider each of them opens.

    ``embedding_provider``/``embedding_options`` name any installed embedding provider (the packaged
    ``sentence-transformers`` model, ``openai``, ``hashing``, ...): every actor opens it once and
    keeps it, so a model loads once per worker, not once per batch. The options travel to the
    workers through Ray's object store: a cluster you do not trust must not receive secrets.
    """

    # hide_input_in_errors: a ValidationError must not quote a value (the inner options may hold secrets).
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    embedding_provider: str = Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$")
    embedding_options: dict[str, Any] = Field(default_factory=dict)
    # None: a local cluster started (and stopped) by the host, or the one already initialised in the process.
    address: str | None = Field(default=None, min_length=1, max_length=2000)
    workers: int = Field(default=2, ge=1, le=1024)
    cpus_per_worker: float = Field(default=1.0, ge=0.0, le=1024.0)
    gpus_per_worker: float = Field(default=0.0, ge=0.0, le=64.0)
    # CPUs of a local cluster the host starts itself (None: Ray counts the machine's).
    local_cpus: int | None = Field(default=None, ge=1, le=4096)
    # How long the workers may take to be placed and to open the inner provider (a model load included)
    # before the host gives up: a cluster without the CPUs or GPUs they reserve would otherwise keep
    # them pending, and the host waiting, forever.
    start_timeout_seconds: float = Field(default=300.0, gt=0.0, le=86_400.0)
    # Modules each worker registers as runiq plugins beside the installed entry points: providers a
    # host registers programmatically (HostBuilder(plugins=[...])) are not visible to workers otherwise.
    plugin_modules: tuple[str, ...] = Field(default=(), max_length=64)

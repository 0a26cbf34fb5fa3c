"""The validated options of the ``openai`` embedding provider (what registration freezes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from runiq.secrets import EnvironmentSecretProvider, EnvVarName, HttpBaseUrl, SecretProvider

from runiq_openai.models import OpenAiEmbeddingModels

__all__ = ["MAX_INPUTS_PER_REQUEST", "MAX_TOKENS_PER_REQUEST", "OpenAiEmbeddingOptions"]

# The embeddings endpoint's own limits: at most 2048 inputs and 300,000 tokens summed per request.
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 300_000


class OpenAiEmbeddingOptions(BaseModel):
    """Options of one OpenAI embedding client. Holds no secret: only where to find it.

    ``timeout`` bounds each HTTP attempt; ``max_retries`` more attempts follow a timeout, a connection
    failure, 408, 409, 429 or 5xx, waiting as ``Retry-After`` says or backing off exponentially with
    jitter (the openai client's own retry loop).
    """

    # hide_input_in_errors: a ValidationError must not quote a value (a base_url may embed credentials).
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, hide_input_in_errors=True)

    model: str = Field(default=OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL.value, pattern=r"^\S{1,256}$")
    dimensions: int | None = Field(default=None, ge=1, le=16384, validate_default=True)
    base_url: HttpBaseUrl | None = None
    api_key_env: EnvVarName = "OPENAI_API_KEY"
    secret_provider: SecretProvider | None = None
    timeout: float = Field(default=30.0, gt=0, le=600)
    max_retries: int = Field(default=4, ge=0, le=10)
    max_inputs_per_request: int = Field(default=MAX_INPUTS_PER_REQUEST, ge=1, le=MAX_INPUTS_PER_REQUEST)
    max_tokens_per_request: int = Field(default=MAX_TOKENS_PER_REQUEST, ge=1, le=MAX_TOKENS_PER_REQUEST)
    max_concurrency: int = Field(default=4, ge=1, le=64)

    @field_validator("model", mode="before")
    @classmethod
    def _model_value(cls, value: Any) -> Any:
        return value.value if isinstance(value, OpenAiEmbeddingModels) else value

    @field_validator("dimensions")
    @classmethod
    def _dimensions_fit_the_model(cls, value: int | None, info: ValidationInfo) -> int | None:
        if "model" not in info.data:  # the model itself was invalid; that error is reported instead
            return value
        known = _known(info.data["model"])
        if known is None:
            if value is None:
                raise ValueError("a model runiq does not know needs explicit dimensions")
            return value
        if value is None:
            return value
        if value > known.dimensions:
            raise ValueError("dimensions exceed the model's native dimensions")
        if not known.supports_reduced_dimensions and value != known.dimensions:
            raise ValueError("this model does not support reduced dimensions")
        return value

    @property
    def known_model(self) -> OpenAiEmbeddingModels | None:
        return _known(self.model)

    @property
    def effective_dimensions(self) -> int:
        """The vector length every response must have."""
        if self.dimensions is not None:
            return self.dimensions
        known = self.known_model
        assert known is not None  # the validator requires dimensions for unknown models
        return known.dimensions

    @property
    def request_dimensions(self) -> int | None:
        """The ``dimensions`` request parameter, or ``None`` to leave it out (ada-002 rejects it)."""
        known = self.known_model
        if self.dimensions is None or (known is not None and not known.supports_reduced_dimensions):
            return None
        return self.dimensions

    def secret_source(self) -> SecretProvider:
        return self.secret_provider or EnvironmentSecretProvider(self.api_key_env)


def _known(model: str) -> OpenAiEmbeddingModels | None:
    try:
        return OpenAiEmbeddingModels(model)
    except ValueError:
        return None

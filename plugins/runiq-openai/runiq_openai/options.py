"""The validated options of the ``openai`` embedding provider (what registration freezes)."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from runiq.secrets import EnvironmentSecretProvider, EnvVarName, HttpBaseUrl, SecretProvider

from runiq_openai.models import OpenAiEmbeddingModels

__all__ = [
    "MAX_DIMENSIONS",
    "MAX_INPUTS_PER_REQUEST",
    "MAX_TOKENS_PER_REQUEST",
    "OPENAI_API_HOST",
    "OPENAI_API_URL",
    "OPENAI_BASE_URL_ENV",
    "OPENAI_KEY_ENV",
    "OpenAiEmbeddingOptions",
]

# The embeddings endpoint's own limits: at most 2048 inputs and 300,000 tokens summed per request.
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 300_000


# The host whose API needs a key: runiq sends a key to it by default, and to no other server unless told.
OPENAI_API_HOST = "api.openai.com"
OPENAI_API_URL = f"https://{OPENAI_API_HOST}/v1"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
# The openai client's own default for base_url: a local server named here gets no key either.
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
MAX_DIMENSIONS = 16384


class OpenAiEmbeddingOptions(BaseModel):
    """Options of one OpenAI embedding client. Holds no secret: only where to find it.

    ``timeout`` bounds each HTTP attempt; ``max_retries`` more attempts follow a timeout, a connection
    failure, 408, 409, 429 or 5xx, waiting as ``Retry-After`` says or backing off exponentially with
    jitter (the openai client's own retry loop).

    The key: ``secret_provider``, else ``api_key_env``; with neither, ``OPENAI_API_KEY`` for OpenAI's
    API (the base URL on api.openai.com) and no key at all for any other server (a local Ollama, vLLM
    or TEI), so an OpenAI key is never sent anywhere else by default. The base URL is ``base_url``,
    else ``OPENAI_BASE_URL`` (as the openai client reads it), else OpenAI's API.

    The vector length: ``dimensions`` when given, else the native length of a model runiq knows, else
    probed with one embedding call when the client opens. ``send_dimensions`` says whether requests
    carry ``dimensions`` (ask the server for shorter vectors); by default only for the text-embedding-3
    models, because for other models ``dimensions`` declares the length the server returns (vLLM, for
    one, refuses the parameter for a model without Matryoshka training).
    """

    # hide_input_in_errors: a ValidationError must not quote a value (a base_url may embed credentials).
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, hide_input_in_errors=True)

    model: str = Field(default=OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL.value, pattern=r"^\S{1,256}$")
    dimensions: int | None = Field(default=None, ge=1, le=MAX_DIMENSIONS)
    send_dimensions: bool | None = Field(default=None, validate_default=True)
    base_url: HttpBaseUrl | None = None
    api_key_env: EnvVarName | None = None
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
        known = _known(info.data["model"]) if "model" in info.data else None  # an invalid model is reported instead
        if known is None or value is None:
            return value
        if value > known.dimensions:
            raise ValueError("dimensions exceed the model's native dimensions")
        if not known.supports_reduced_dimensions and value != known.dimensions:
            raise ValueError("this model does not support reduced dimensions")
        return value

    @field_validator("send_dimensions")
    @classmethod
    def _something_to_send(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        if not value or "dimensions" not in info.data:  # an invalid dimensions is reported instead
            return value
        if info.data["dimensions"] is None:
            raise ValueError("send_dimensions needs dimensions")
        known = _known(info.data["model"]) if "model" in info.data else None
        if known is not None and not known.supports_reduced_dimensions:
            raise ValueError("this model does not accept a dimensions parameter")
        return value

    @property
    def known_model(self) -> OpenAiEmbeddingModels | None:
        return _known(self.model)

    @property
    def declared_dimensions(self) -> int | None:
        """The vector length every response must have, or ``None``: probe the server when the client opens."""
        if self.dimensions is not None:
            return self.dimensions
        known = self.known_model
        return known.dimensions if known is not None else None

    @property
    def request_dimensions(self) -> int | None:
        """The ``dimensions`` request parameter, or ``None`` to leave it out (see ``send_dimensions``)."""
        if self.send_dimensions is not None:
            return self.dimensions if self.send_dimensions else None
        known = self.known_model
        if known is None or not known.supports_reduced_dimensions:
            return None
        return self.dimensions

    def request_base_url(self) -> str:
        """Where requests go, read now: ``base_url``, else ``OPENAI_BASE_URL``, else OpenAI's API."""
        return self.base_url or os.environ.get(OPENAI_BASE_URL_ENV, "").strip() or OPENAI_API_URL

    @property
    def uses_openai_api(self) -> bool:
        """Whether requests go to OpenAI's own API (:meth:`request_base_url` on api.openai.com)."""
        return _is_openai_api(self.request_base_url())

    def secret_source(self, base_url: str | None = None) -> SecretProvider | None:
        """Where the key for requests to ``base_url`` (default :meth:`request_base_url`) comes from, or
        ``None``: no key is sent (a server other than OpenAI's, none configured)."""
        if self.secret_provider is not None:
            return self.secret_provider
        if self.api_key_env is not None:
            return EnvironmentSecretProvider(self.api_key_env)
        openai_api = _is_openai_api(base_url or self.request_base_url())
        return EnvironmentSecretProvider(OPENAI_KEY_ENV) if openai_api else None


def _is_openai_api(base_url: str) -> bool:
    return (urlsplit(base_url).hostname or "").lower() == OPENAI_API_HOST


def _known(model: str) -> OpenAiEmbeddingModels | None:
    try:
        return OpenAiEmbeddingModels(model)
    except ValueError:
        return None

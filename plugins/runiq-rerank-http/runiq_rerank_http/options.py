"""The validated options of the ``rerank-http`` reranker provider (what registration freezes)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from runiq.rag.providers import MAX_RERANK_CANDIDATES
from runiq.secrets import EnvironmentSecretProvider, EnvVarName, HttpBaseUrl, SecretProvider

from runiq_rerank_http.backends import BACKENDS, BackendSpec, RerankBackend
from runiq_rerank_http.scores import ScoreMapping

__all__ = ["PROVIDER_NAME", "HttpRerankerOptions"]

PROVIDER_NAME = "rerank-http"


class HttpRerankerOptions(BaseModel):
    """Options of one HTTP reranker. Holds no secret: only where to find it.

    ``None`` means the backend's default (:data:`runiq_rerank_http.backends.BACKENDS`). ``timeout``
    bounds each HTTP attempt; after a timeout, a connection failure, 408, 429 or 5xx up to
    ``max_retries`` more attempts follow, waiting what ``Retry-After`` says (when it is at most
    ``max_retry_wait`` seconds; a longer wait fails at once) or backing off exponentially with jitter.
    The context policy's ``RerankingOptions.timeout_seconds`` bounds the whole call, retries included.
    """

    # hide_input_in_errors: a ValidationError must not quote a value (a base_url may embed credentials).
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, hide_input_in_errors=True)

    backend: RerankBackend
    base_url: HttpBaseUrl | None = Field(default=None, validate_default=True)
    model: str | None = Field(default=None, pattern=r"^\S{1,256}$")
    api_key_env: EnvVarName | None = None
    secret_provider: SecretProvider | None = None
    timeout: float = Field(default=10.0, gt=0, le=600)
    max_retries: int = Field(default=2, ge=0, le=10)
    max_retry_wait: float = Field(default=10.0, ge=0, le=600)
    max_documents_per_request: int | None = Field(default=None, ge=1, le=MAX_RERANK_CANDIDATES)
    max_concurrency: int = Field(default=4, ge=1, le=64)
    score_mapping: ScoreMapping | None = None

    @field_validator("base_url")
    @classmethod
    def _base_url_for_self_hosted(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            backend = info.data.get("backend")  # absent when the backend itself was invalid
            if backend is not None and BACKENDS[backend].base_url is None:
                raise ValueError("base_url is required for a self-hosted backend (tei, infinity, vllm)")
            return None
        return value.rstrip("/")

    @property
    def spec(self) -> BackendSpec:
        return BACKENDS[self.backend]

    @property
    def url(self) -> str:
        """The rerank endpoint: ``base_url`` (or the hosted API's) plus the backend's path."""
        base = self.base_url if self.base_url is not None else self.spec.base_url
        assert base is not None  # the model validator requires one
        return base + self.spec.path

    @property
    def effective_model(self) -> str | None:
        return self.model if self.model is not None else self.spec.model

    @property
    def effective_mapping(self) -> ScoreMapping:
        return self.score_mapping if self.score_mapping is not None else self.spec.score_mapping

    @property
    def batch_size(self) -> int:
        """Documents per HTTP request."""
        chosen = self.max_documents_per_request or self.spec.max_documents
        return min(chosen, MAX_RERANK_CANDIDATES)

    def secret_source(self) -> SecretProvider | None:
        """The key's source, or ``None``: a self-hosted backend with no key configured sends none."""
        if self.secret_provider is not None:
            return self.secret_provider
        variable = self.api_key_env or self.spec.api_key_env
        return EnvironmentSecretProvider(variable) if variable is not None else None

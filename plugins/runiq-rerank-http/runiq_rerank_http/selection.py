"""The typed selection ``HttpReranking(...)``."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, fields

from runiq.errors import call_translated, invalid_fields
from runiq.secrets import SecretProvider

from runiq_rerank_http.backends import RerankBackend
from runiq_rerank_http.options import PROVIDER_NAME, HttpRerankerOptions
from runiq_rerank_http.scores import ScoreMapping

__all__ = ["HttpReranking"]


@dataclass(frozen=True, slots=True)
class HttpReranking:
    """Select a rerank API for an index: ``index.use_reranker(HttpReranking("tei", base_url=...), approved=True)``.

    The query and the candidates' text are sent to the API, so the host must approve the egress
    (``approved=True``), even for a server on the same machine.

    Args:
        backend: ``"cohere"``, ``"jina"``, ``"tei"``, ``"infinity"`` or ``"vllm"`` (a :class:`RerankBackend`).
        base_url: the server's address (required for tei, infinity and vllm; Cohere and Jina default
            to their public APIs). The backend's path (``/v2/rerank``, ``/rerank``...) is appended.
        model: the model name sent (Cohere ``rerank-v3.5`` and Jina ``jina-reranker-v2-base-multilingual``
            by default; omitted for the others unless given, as a single-model server needs none).
        api_key_env: the environment variable holding the API key, read when the reranker opens
            (``CO_API_KEY`` for Cohere, ``JINA_API_KEY`` for Jina; none for self-hosted servers).
        secret_provider: a :class:`SecretProvider` to use instead of the environment variable.
        timeout: seconds per HTTP attempt (default 10).
        max_retries: extra attempts after timeouts, connection errors, 408, 429 and 5xx (default 2).
        max_retry_wait: the longest ``Retry-After`` honoured, in seconds (default 10); longer fails at once.
        max_documents_per_request: documents per HTTP request (default: the backend's limit).
        max_concurrency: requests in flight at once from this reranker (default 4).
        score_mapping: ``"as_is"`` or ``"sigmoid"`` (default: the backend's; see ``backends``).

    ``None`` for any option means the default. Invalid values fail here, naming the option.
    """

    backend: RerankBackend | str
    _: KW_ONLY
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    secret_provider: SecretProvider | None = None
    timeout: float | None = None
    max_retries: int | None = None
    max_retry_wait: float | None = None
    max_documents_per_request: int | None = None
    max_concurrency: int | None = None
    score_mapping: ScoreMapping | str | None = None

    def __post_init__(self) -> None:
        self.options()  # validate now, so a bad selection fails where it is written

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        # Safe display metadata: never the URL or the key.
        options = self.options()
        model = options.effective_model
        return f"HTTP reranker ({options.backend.value}" + (f", {model})" if model else ")")

    def provider_options(self) -> dict[str, object]:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    def options(self) -> HttpRerankerOptions:
        # Raised outside ``except``: the ValidationError holds the values (a URL with credentials) as input.
        return call_translated(
            lambda: HttpRerankerOptions.model_validate(self.provider_options()),
            invalid_fields("Invalid HTTP reranker selection"),
        )

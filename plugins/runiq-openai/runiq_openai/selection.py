"""The typed selection ``OpenAiEmbedding(...)`` and the ``use_openai_embedding_model`` convenience."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, fields
from typing import TypeVar

from runiq.errors import call_translated, invalid_fields
from runiq.rag import IndexBuilder
from runiq.secrets import SecretProvider

from runiq_openai.models import OpenAiEmbeddingModels
from runiq_openai.options import OpenAiEmbeddingOptions

__all__ = ["PROVIDER_NAME", "OpenAiEmbedding", "use_openai_embedding_model"]

PROVIDER_NAME = "openai"

_Builder = TypeVar("_Builder", bound=IndexBuilder)


@dataclass(frozen=True, slots=True)
class OpenAiEmbedding:
    """Select OpenAI embeddings for an index: ``index.use_embedding(OpenAiEmbedding(model))``.

    Args:
        model: an :class:`OpenAiEmbeddingModels` member, or the name another server gives its model
            (``"nomic-embed-text"`` on Ollama, the Hugging Face id on vLLM).
        dimensions: for text-embedding-3 models, request shorter vectors (``None``: the model's own).
            For other models, the length the server returns; ``None`` asks the server once (one
            embedding call when the client opens).
        send_dimensions: send ``dimensions`` in each request (default: only for text-embedding-3
            models; ``True`` for a Matryoshka model served elsewhere, or an Azure deployment name).
        base_url: an OpenAI-compatible endpoint (a local server, Azure OpenAI's ``/openai/v1/``);
            ``None`` is ``OPENAI_BASE_URL`` when set, else OpenAI's API (the key rule below applies
            to whichever server that is).
        api_key_env: the environment variable holding the API key, read when the client opens.
            Default: ``OPENAI_API_KEY`` for OpenAI's API, and no key for any other ``base_url``.
        secret_provider: a :class:`SecretProvider` to use instead of the environment variable.
        timeout: seconds per HTTP attempt (default 30).
        max_retries: extra attempts after 429, 5xx, timeouts and connection errors (default 4).
        max_inputs_per_request: texts per HTTP request, at most the API's 2048 (TEI's default
            ``--max-client-batch-size`` is 32).
        max_concurrency: requests in flight at once from this client (default 4).

    ``None`` for any option means the provider's default. Invalid values fail here, naming the option.
    """

    model: OpenAiEmbeddingModels | str = OpenAiEmbeddingModels.TEXT_EMBEDDING_3_SMALL
    _: KW_ONLY
    dimensions: int | None = None
    send_dimensions: bool | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    secret_provider: SecretProvider | None = None
    timeout: float | None = None
    max_retries: int | None = None
    max_inputs_per_request: int | None = None
    max_concurrency: int | None = None

    def __post_init__(self) -> None:
        self.options()  # validate now, so a bad selection fails where it is written

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        options = self.options()
        dimensions = options.declared_dimensions
        return f"OpenAI {options.model} ({f'{dimensions} dimensions' if dimensions else 'dimensions probed'})"

    def provider_options(self) -> dict[str, object]:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(self.model, OpenAiEmbeddingModels):
            values["model"] = self.model.value
        return {name: value for name, value in values.items() if value is not None}

    def options(self) -> OpenAiEmbeddingOptions:
        # Raised outside ``except``: the ValidationError holds the values (a path, a URL) as input.
        return call_translated(
            lambda: OpenAiEmbeddingOptions.model_validate(self.provider_options()),
            invalid_fields("Invalid OpenAI embedding selection"),
        )


def use_openai_embedding_model(
    index_builder: _Builder, model: OpenAiEmbeddingModels | str, **options: object
) -> _Builder:
    """``index.use_embedding(OpenAiEmbedding(model, **options))``, returning the builder for chaining."""
    index_builder.use_embedding(OpenAiEmbedding(model, **options))  # type: ignore[arg-type]
    return index_builder

"""The provider registry that plugins fill through ``runiq_register_providers``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from runiq.errors import ProviderNotFoundError, RagConfigurationError, call_translated, invalid_fields

__all__ = ["KNOWN_DISTRIBUTIONS", "EmptyOptions", "ProviderFactory", "ProviderKind", "ProviderRegistry", "ProviderSpec"]

# Providers runiq knows by name but does not ship in the core: the error says what to install.
KNOWN_DISTRIBUTIONS: Mapping[tuple[str, str], str] = {
    ("vector store", "postgresql"): "runiq-postgresql",
    ("embedding", "openai"): "runiq-openai",
    ("embedding", "sentence-transformers"): "runiq-sentence-transformers",
    ("embedding", "ray"): "runiq-ray",
    ("reranker", "rerank-http"): "runiq-rerank-http",
    ("reranker", "sentence-transformers"): "runiq-sentence-transformers",
}

# A factory receives the validated options model and yields the live object; the host enters it on
# first use and exits it when it stops, so pools and clients close cleanly.
ProviderFactory = Callable[[Any], AbstractAsyncContextManager[Any]]


class ProviderKind(StrEnum):
    EMBEDDING = "embedding"
    VECTOR_STORE = "vector store"
    RERANKER = "reranker"


class EmptyOptions(BaseModel):
    """Options model for providers that take none; unknown keys are rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    kind: ProviderKind
    name: str
    factory: ProviderFactory
    options_model: type[BaseModel]
    plugin: str
    remote: bool = False  # rerankers: content leaves the host (needs the host's approval)

    def validate_options(self, options: Mapping[str, Any], *, context: str) -> BaseModel:
        """Validate options at registration; messages name fields, never the values (they may be secrets).

        The error is raised outside ``except`` (:func:`~runiq.errors.call_translated`): pydantic's
        ``ValidationError`` keeps every value, a DSN or an API key, as input.
        """
        return call_translated(
            lambda: self.options_model.model_validate(dict(options)),
            invalid_fields(f"Invalid options for {self.kind.value} provider '{self.name}' in {context}"),
        )


class ProviderRegistry:
    """Name -> provider, per kind. Records which plugin registered each name."""

    def __init__(self) -> None:
        self._specs: dict[tuple[ProviderKind, str], ProviderSpec] = {}
        self._current_plugin = "<direct>"

    def set_current_plugin(self, name: str) -> None:
        self._current_plugin = name

    def add_embedding(self, name: str, factory: ProviderFactory, *, options: type[BaseModel] = EmptyOptions) -> None:
        self._add(ProviderKind.EMBEDDING, name, factory, options)

    def add_vector_store(self, name: str, factory: ProviderFactory, *, options: type[BaseModel] = EmptyOptions) -> None:
        self._add(ProviderKind.VECTOR_STORE, name, factory, options)

    def add_reranker(
        self, name: str, factory: ProviderFactory, *, options: type[BaseModel] = EmptyOptions, remote: bool = True
    ) -> None:
        """``remote`` (the safe default) means query and chunk content leave the host: an index may use
        such a reranker only with ``use_reranker(..., approved=True)``."""
        self._add(ProviderKind.RERANKER, name, factory, options, remote=remote)

    def _add(
        self, kind: ProviderKind, name: str, factory: ProviderFactory, options: type[BaseModel], *, remote: bool = False
    ) -> None:
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise RagConfigurationError(f"A {kind.value} provider name must be a non-empty trimmed string.")
        if not callable(factory):
            raise RagConfigurationError(f"The factory of {kind.value} provider '{name}' must be callable.")
        if not (isinstance(options, type) and issubclass(options, BaseModel)):
            raise RagConfigurationError(f"The options of {kind.value} provider '{name}' must be a pydantic model.")
        existing = self._specs.get((kind, name))
        if existing is not None:
            raise RagConfigurationError(
                f"{kind.value} provider '{name}' is registered by both "
                f"'{existing.plugin}' and '{self._current_plugin}'."
            )
        self._specs[(kind, name)] = ProviderSpec(
            kind=kind, name=name, factory=factory, options_model=options, plugin=self._current_plugin, remote=remote
        )

    def get(self, kind: ProviderKind, name: str) -> ProviderSpec:
        spec = self._specs.get((kind, name))
        if spec is None:
            raise ProviderNotFoundError(kind.value, name, KNOWN_DISTRIBUTIONS.get((kind.value, name)))
        return spec

    def names(self, kind: ProviderKind) -> list[str]:
        return sorted(name for k, name in self._specs if k is kind)

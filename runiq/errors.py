"""The one exception tree of runiq.

Every error runiq raises on purpose is a :class:`RagError`. Subclasses also inherit the builtin they
specialise, so ``except ValueError`` or ``except LookupError`` keeps working in host code::

    RagError
    ├── RagConfigurationError(RagError, ValueError)     bad registration or settings, raised at build time
    │   └── ProviderNotFoundError(..., LookupError)     a provider name nobody registered
    ├── RagValidationError(RagError, ValueError)        a bad runtime request (query, filter, top_k)
    ├── IndexNotFoundError(RagError, LookupError)       an index name that is not registered
    ├── RetrievalError(RagError)                        a retrieval source failed (``.code`` says which)
    ├── IngestionError(RagError)
    │   ├── IngestionConflictError                      an index already has an active operation
    │   ├── NoActiveIngestionError(..., LookupError)    cancel with nothing running
    │   ├── IngestionUnavailableError(..., RuntimeError) the manager has stopped
    │   └── StartupIngestionError                       OnStartup ingestion did not complete
    ├── DocumentSourceError(RagError)                   a source could not be enumerated at all
    ├── ProviderError(RagError)
    │   ├── ProviderTimeoutError(..., TimeoutError)
    │   ├── ProviderUnavailableError
    │   └── ProviderResponseError                       malformed or inconsistent provider output
    └── VectorStoreError(RagError)
        ├── VectorStoreUnavailableError
        ├── VectorIndexNotFoundError(..., LookupError)
        ├── VectorDimensionMismatchError(..., ValueError)
        └── SchemaMismatchError                         stored index disagrees with the configuration

Why fixed messages: document content, queries, paths, DSNs and provider bodies are untrusted or secret.
Each class builds its message in ``__init__`` from a template and typed attributes (index names,
provider names, counts, codes). Content, queries, paths, DSNs and provider bodies never reach
``str(exc)``; identifiers the caller chose, such as an index name, do.

Why translate outside ``except``: an exception raised inside an ``except`` block keeps the one being
handled as ``__context__``, and ``raise ... from None`` only hides it from tracebacks. A provider's
exception can carry the query, chunk content, a file name or (in a request echoed back) the API
key, so :func:`translated` and :func:`call_translated` raise the library's error after the
``except`` block has ended: it has no ``__context__``, and the provider's exception is released.
:func:`replacing` is the usual ``translate``: one fixed error for the exception kinds a call is
expected to raise. :func:`chained` keeps a runiq error as ``__cause__`` only when nothing foreign is
chained to it.

Why only field names from a pydantic ``ValidationError``: it keeps every value it was given as
``input`` (a DSN, an API key, a path), and its ``str()`` can quote them. :func:`invalid_fields` is the
one ``translate`` that turns it into a :class:`RagConfigurationError` naming the fields (and the text
of a runiq error a validator raised, content-free by contract); :func:`field_names` is the naming rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TypeVar

from pydantic import ValidationError

__all__ = [
    "DocumentSourceError",
    "IndexNotFoundError",
    "IngestionConflictError",
    "IngestionError",
    "IngestionUnavailableError",
    "NoActiveIngestionError",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderResponseError",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "RagConfigurationError",
    "RagError",
    "RagValidationError",
    "RetrievalError",
    "RetrievalErrorCode",
    "SchemaMismatchError",
    "StartupIngestionError",
    "VectorDimensionMismatchError",
    "VectorIndexNotFoundError",
    "VectorStoreError",
    "VectorStoreUnavailableError",
    "call_translated",
    "chained",
    "content_free",
    "field_names",
    "first_leaf",
    "invalid_fields",
    "replacing",
    "translated",
]


class RagError(Exception):
    """Base of every runiq error. ``str()`` and ``repr()`` never contain content or secrets."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class RagConfigurationError(RagError, ValueError):
    """Registration or settings are invalid; raised while the host is being built, before any I/O.

    ``message`` must be written by runiq itself from safe parts (index names, option names).
    """


class ProviderNotFoundError(RagConfigurationError, LookupError):
    """A configuration names a provider that no installed plugin registered."""

    def __init__(self, kind: str, name: str, distribution: str | None = None) -> None:
        self.kind = kind
        self.provider = name
        self.distribution = distribution
        hint = f"; pip install {distribution}" if distribution else "; install the plugin that provides it"
        super().__init__(f"{kind} provider '{name}' is not installed{hint}")


class RagValidationError(RagError, ValueError):
    """A runtime request is invalid (for example an empty query or a non-positive top_k)."""


class IndexNotFoundError(RagError, LookupError):
    """The index name is not registered with this host."""

    def __init__(self, index_name: str) -> None:
        self.index_name = index_name
        super().__init__(f"RAG index '{index_name}' is not registered.")


class RetrievalErrorCode(StrEnum):
    """Which part of retrieval failed; stable values for callers and HTTP payloads."""

    EMBEDDING_FAILED = "embedding_failed"
    VECTOR_STORE_QUERY_FAILED = "vector_store_query_failed"
    LEXICAL_QUERY_FAILED = "lexical_query_failed"
    LEXICAL_NOT_SUPPORTED = "lexical_not_supported"


_RETRIEVAL_MESSAGES = {
    RetrievalErrorCode.EMBEDDING_FAILED: "Query embedding generation failed.",
    RetrievalErrorCode.VECTOR_STORE_QUERY_FAILED: "Vector store query failed.",
    RetrievalErrorCode.LEXICAL_QUERY_FAILED: "Lexical store query failed.",
    RetrievalErrorCode.LEXICAL_NOT_SUPPORTED: "The index's vector store does not support lexical search.",
}


class RetrievalError(RagError):
    """A retrieval source failed. The provider's own text is never copied; ``cause_type`` names its class."""

    def __init__(self, code: RetrievalErrorCode, index_name: str, cause_type: str | None = None) -> None:
        self.code = code
        self.index_name = index_name
        self.cause_type = cause_type
        super().__init__(f"{_RETRIEVAL_MESSAGES[code]} Index: '{index_name}'.")


class IngestionError(RagError):
    """Base of ingestion runtime errors."""


class IngestionConflictError(IngestionError):
    """A second start while an operation is active: the manager is the conflict authority."""

    def __init__(self, index_name: str, operation_id: str | None = None) -> None:
        self.index_name = index_name
        self.operation_id = operation_id
        super().__init__(f"RAG index '{index_name}' already has an active ingestion operation.")


class IngestionUnavailableError(IngestionError, RuntimeError):
    """The ingestion manager has stopped (the host is shutting down); no new run can start."""

    def __init__(self, index_name: str) -> None:
        self.index_name = index_name
        super().__init__(f"Ingestion for RAG index '{index_name}' is unavailable: the host is stopping.")


class NoActiveIngestionError(IngestionError, LookupError):
    """Cancel was asked for an index that has no active operation."""

    def __init__(self, index_name: str) -> None:
        self.index_name = index_name
        super().__init__(f"RAG index '{index_name}' has no active ingestion operation.")


class StartupIngestionError(IngestionError):
    """An OnStartup index did not complete, so the host refuses to start."""

    def __init__(self, index_name: str, state: str) -> None:
        self.index_name = index_name
        self.state = state
        super().__init__(
            f"Startup ingestion did not complete successfully for RAG index '{index_name}' (state: {state})."
        )


class DocumentSourceError(RagError):
    """A source could not be enumerated at all (for example its root directory is missing)."""

    def __init__(self, source_kind: str, reason: str) -> None:
        self.source_kind = source_kind
        self.reason = reason
        super().__init__(f"{source_kind} source could not be read: {reason}.")


class ProviderError(RagError):
    """An embedding or reranking provider failed. ``status`` carries an HTTP status when there is one."""

    def __init__(self, provider: str, reason: str = "the provider call failed", status: int | None = None) -> None:
        self.provider = provider
        self.reason = reason
        self.status = status
        suffix = f" (status {status})" if status is not None else ""
        super().__init__(f"Provider '{provider}': {reason}{suffix}.")


class ProviderTimeoutError(ProviderError, TimeoutError):
    """The provider did not answer within its configured timeout."""

    def __init__(self, provider: str, timeout_seconds: float | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        reason = "the call timed out" if timeout_seconds is None else f"the call timed out after {timeout_seconds:g}s"
        super().__init__(provider, reason)


class ProviderUnavailableError(ProviderError):
    """The provider could not be reached or refused the call."""


class ProviderResponseError(ProviderError):
    """The provider answered with something runiq cannot use (wrong count, wrong dimension, NaN)."""


class VectorStoreError(RagError):
    """Base of vector store failures."""


class VectorStoreUnavailableError(VectorStoreError):
    """The store's backend is unreachable or failed; ``sqlstate`` keeps a database error code if any."""

    def __init__(self, store: str, sqlstate: str | None = None) -> None:
        self.store = store
        self.sqlstate = sqlstate
        suffix = f" (SQLSTATE {sqlstate})" if sqlstate else ""
        super().__init__(f"Vector store '{store}' is unavailable or failed{suffix}.")


class VectorIndexNotFoundError(VectorStoreError, LookupError):
    """The store holds no data for this index yet (it has never been ingested)."""

    def __init__(self, index_name: str) -> None:
        self.index_name = index_name
        super().__init__(f"Vector index '{index_name}' has not been created.")


class VectorDimensionMismatchError(VectorStoreError, ValueError):
    """A vector's length differs from the index's dimension."""

    def __init__(self, index_name: str, expected: int, actual: int) -> None:
        self.index_name = index_name
        self.expected = expected
        self.actual = actual
        super().__init__(f"Vector dimension {actual} does not match the dimension {expected} of index '{index_name}'.")


class SchemaMismatchError(VectorStoreError):
    """The stored index was built with another embedding model, dimension or metric."""

    def __init__(self, index_name: str, field: str, stored: str, configured: str) -> None:
        self.index_name = index_name
        self.field = field
        self.stored = stored
        self.configured = configured
        super().__init__(
            f"Index '{index_name}' was built with {field} '{stored}' but is configured with '{configured}'; "
            "re-create the index instead of mixing vectors."
        )


# Translating foreign exceptions ------------------------------------------------------------------

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
Translate = Callable[[Exception], BaseException]


async def translated(call: Callable[[], Awaitable[T]], translate: Translate) -> T:
    """Await ``call()``; an ``Exception`` it raises is replaced by ``translate(exc)``.

    The replacement is raised after the ``except`` block, so it has no ``__context__`` (unless the
    caller is itself handling an exception) and the original is not kept alive. ``translate`` may
    return ``exc`` itself to let a runiq error through unchanged; it must not raise. Cancellation and
    other ``BaseException``s pass untouched.
    """
    try:
        return await call()
    except Exception as exc:
        error = translate(exc)
    raise error


def call_translated(call: Callable[[], T], translate: Translate) -> T:
    """The synchronous form of :func:`translated` (for worker threads and parsers)."""
    try:
        return call()
    except Exception as exc:
        error = translate(exc)
    raise error


def replacing(kinds: type[Exception] | tuple[type[Exception], ...], error: BaseException) -> Translate:
    """A ``translate`` for :func:`translated` and :func:`call_translated`: an exception of ``kinds``
    becomes ``error`` (a fixed message, built before the call); any other passes through unchanged.

    ``call_translated(lambda: Metric(value), replacing(ValueError, RagConfigurationError("...")))``
    """
    return lambda exc: error if isinstance(exc, kinds) else exc


def content_free(error: BaseException) -> bool:
    """True when ``error`` and everything chained to it (causes, contexts, group members) are runiq errors."""
    pending, seen = [error], set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        elif not isinstance(current, RagError):
            return False
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return True


def chained(error: E, cause: BaseException) -> E:
    """``error`` with ``cause`` as its ``__cause__`` if :func:`content_free` holds for ``cause``; else unchained."""
    if content_free(cause):
        error.__cause__ = cause
    return error


def first_leaf(error: BaseException) -> BaseException:
    """The first non-group exception in an exception group (``error`` itself when it is not a group)."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def field_names(error: ValidationError, *, whole: str = "options") -> str:
    """The fields ``error`` finds invalid, dotted and sorted (``"base_url, retry.max_wait"``); never a value.

    ``whole`` names an error about the model itself (its location is empty).
    """
    return ", ".join(sorted({".".join(str(part) for part in err["loc"]) or whole for err in error.errors()}))


def invalid_fields(what: str, *, whole: str = "options") -> Callable[[Exception], Exception]:
    """A ``translate`` for :func:`call_translated`: a ``ValidationError`` becomes
    ``RagConfigurationError("{what}: {fields}.")``, followed by the text of any runiq error a validator
    raised; any other exception passes through unchanged.

    ``call_translated(lambda: Options.model_validate(values), invalid_fields("Invalid OpenAI embedding selection"))``
    """

    def translate(exc: Exception) -> Exception:
        if not isinstance(exc, ValidationError):
            return exc
        advice = [str(e) for err in exc.errors() if isinstance(e := err.get("ctx", {}).get("error"), RagError)]
        return RagConfigurationError(
            f"{what}: {field_names(exc, whole=whole)}." + "".join(f" {text}" for text in advice)
        )

    return translate

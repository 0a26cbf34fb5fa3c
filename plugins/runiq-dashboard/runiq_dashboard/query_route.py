"""``POST {base}/api/rag/indexes/{index_name}/query``: retrieval with chunk text, for the ``query`` role.

The contract is ``runiq query --server``'s (:mod:`runiq.cli.remote`): the body is
``{"text", "mode", "top_k", "filters"}`` (:class:`~runiq_dashboard.dto.RagQueryRequestDto`), the
answer :class:`runiq.cli.output.QueryOutput` (``{"version", "index_name", "mode", "hits"}``).

The access dependency has already run when this route reads the body (it needs ``query``, refused
while querying is off, and the origin check), so a refused caller's body is never read. Then, in
order: the index must exist (404), a token must be left in the rate limit (429 with
``Retry-After``), the body must fit in :data:`MAX_QUERY_BODY_BYTES` (413) and validate (422), and
retrieval must work (422 for an invalid query, 409 for an index never ingested, 503 when a source
fails). Every answer is a fixed
problem document; the query text and the chunk text are never logged, and no error raised here
keeps an exception that could quote them as ``__context__``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError

from runiq.cli.toolkit import QueryOutput
from runiq.errors import (
    IndexNotFoundError,
    RagError,
    RagValidationError,
    RetrievalError,
    RetrievalErrorCode,
    VectorIndexNotFoundError,
)
from runiq.rag import IndexDefinition, RagQuery, RagRetrievalResult, RagRetriever
from runiq_dashboard.access import QUERY_ROUTE
from runiq_dashboard.context import RagServices
from runiq_dashboard.dto import ProblemDto, RagQueryRequestDto
from runiq_dashboard.problems import (
    Problem,
    ProblemError,
    index_not_found,
    index_not_ingested,
    invalid_request,
    lexical_not_supported,
    rate_limited,
    request_too_large,
    retrieval_failed,
)

__all__ = ["MAX_QUERY_BODY_BYTES", "query_router"]

MAX_QUERY_BODY_BYTES = 256 * 1024  # 16,384 characters of text JSON-escaped, plus 32 filters


def _problem(description: str) -> dict[str, Any]:
    return {"model": ProblemDto, "description": description}


def query_router(
    rag: RagServices,
    definition: Callable[[str], IndexDefinition],
    denied: dict[int | str, dict[str, Any]],
) -> APIRouter:
    router = APIRouter()

    @router.post(
        "/indexes/{index_name}/query",
        name=QUERY_ROUTE,
        response_model=QueryOutput,
        openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": _body_schema()}}}},
        responses={
            **denied,
            404: _problem("The RAG index is not registered."),
            409: _problem("The index holds no data yet (never ingested)."),
            413: _problem("The body is larger than 256 KiB."),
            422: _problem("The body or the query is not valid (fixed message)."),
            429: _problem("Too many queries: see Retry-After (seconds)."),
            503: _problem("A retrieval source failed."),
        },
    )
    async def query_index(index_name: str, request: Request) -> QueryOutput:
        """Retrieve the top chunks with their text, scores and provenance. Needs the ``query`` role."""
        name = definition(index_name).name
        retry_after = rag.query_bucket.acquire()
        if retry_after is not None:
            raise ProblemError(rate_limited(retry_after))
        body = await _read_body(request)
        answer = await _retrieve(rag.retriever, name, _parse(body))
        if isinstance(answer, Problem):
            raise ProblemError(answer)
        return QueryOutput.of(answer)

    return router


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_QUERY_BODY_BYTES:
        raise ProblemError(request_too_large())
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_QUERY_BODY_BYTES:
            raise ProblemError(request_too_large())
    return bytes(body)


def _parse(body: bytes) -> RagQueryRequestDto:
    parsed: RagQueryRequestDto | None = None
    with suppress(ValidationError):  # it holds the input: not kept as context of what is raised below
        parsed = RagQueryRequestDto.model_validate_json(body)
    if parsed is None:
        raise ProblemError(invalid_request())
    return parsed


async def _retrieve(retriever: RagRetriever, index_name: str, body: RagQueryRequestDto) -> RagRetrievalResult | Problem:
    """The result, or the fixed problem to answer instead (returned, so no exception survives as context)."""
    try:
        query = RagQuery(index_name=index_name, text=body.text, mode=body.mode, top_k=body.top_k, filters=body.filters)
        return await retriever.retrieve(query)
    except RagValidationError:
        return invalid_request()
    except IndexNotFoundError:
        return index_not_found()
    except VectorIndexNotFoundError:
        return index_not_ingested()
    except RetrievalError as exc:
        return lexical_not_supported() if exc.code is RetrievalErrorCode.LEXICAL_NOT_SUPPORTED else retrieval_failed()
    except (RagError, RuntimeError):  # a provider or store that cannot open; RuntimeError: the host is stopping
        return retrieval_failed()


def _body_schema() -> dict[str, Any]:
    """The request model's JSON Schema with its ``$defs`` inlined (the OpenAPI document keeps none here)."""
    schema = RagQueryRequestDto.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            reference = node.get("$ref")
            if isinstance(reference, str) and reference.startswith("#/$defs/"):
                return inline(definitions[reference.removeprefix("#/$defs/")])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    result: dict[str, Any] = inline(schema)
    return result

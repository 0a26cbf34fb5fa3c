"""``runiq query --server URL``: ask a running ``runiq serve`` instead of loading providers in the CLI.

``POST {base}/api/rag/indexes/{name}/query`` with ``{"text", "mode", "top_k", "filters"}``. ``base`` is
the dashboard page URL that ``runiq serve`` prints (``http://127.0.0.1:8710/runiq/``); a URL without a
path means the default base path ``/runiq``. An API key, when given, goes in ``Authorization: Bearer``.
The request carries no ``Origin`` header, which is how the dashboard tells a non-browser client from a
cross-site page. Error messages are fixed strings: they never echo the URL (it may hold credentials),
the query or the server's body.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from pydantic import ValidationError

from runiq.cli.output import QueryOutput, ServerQueryAnswer
from runiq.errors import RagError
from runiq.rag import RagQuery

__all__ = ["DEFAULT_BASE_PATH", "MAX_ANSWER_BYTES", "RemoteQueryError", "endpoint", "query_server"]

DEFAULT_BASE_PATH = "/runiq"  # runiq_dashboard.DEFAULT_BASE_PATH; the CLI must not import the dashboard
MAX_ANSWER_BYTES = 64 * 1024 * 1024

_STATUS_MEANING = {
    401: "the server needs an API key (--api-key or RUNIQ_API_KEY), or refused the one given",
    403: (
        "the server refused this client (querying is off on the server, the key lacks the query role, "
        "or the client is not on loopback)"
    ),
    404: "the server has no such index, or no query endpoint at this URL",
    422: "the server rejected the query",
}


class RemoteQueryError(RagError):
    """``runiq query --server`` could not get a result; the message is a fixed description."""


def endpoint(server: str, index_name: str) -> str:
    """The query URL for ``index_name`` under ``server`` (http or https only)."""
    parts = urllib.parse.urlsplit(server.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RemoteQueryError("The server URL must be an http:// or https:// URL.")
    base = parts.path.rstrip("/") or DEFAULT_BASE_PATH
    path = f"{base}/api/rag/indexes/{urllib.parse.quote(index_name, safe='')}/query"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _body(request: RagQuery) -> bytes:
    payload: dict[str, object] = {"text": request.text, "top_k": request.top_k}
    if request.mode is not None:
        payload["mode"] = request.mode.value
    if request.filters:
        payload["filters"] = dict(request.filters)
    return json.dumps(payload).encode("utf-8")


def query_server(server: str, request: RagQuery, *, api_key: str | None = None, timeout: float = 60.0) -> QueryOutput:
    """Send ``request`` (already validated by :class:`RagQuery`) to ``server`` and parse the answer."""
    headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "runiq-cli"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key.strip()}"
    http_request = urllib.request.Request(  # noqa: S310 - endpoint() admits http and https only
        endpoint(server, request.index_name), data=_body(request), headers=headers, method="POST"
    )
    raw, failure = _post(http_request, timeout)
    if failure is not None:  # raised here, outside the handlers: no __context__ holding the URL
        raise RemoteQueryError(failure)
    return _parse(raw, request)


def _post(http_request: urllib.request.Request, timeout: float) -> tuple[bytes, str | None]:
    """The answer's bytes, or a fixed description of why there is none."""
    try:
        with urllib.request.urlopen(http_request, timeout=timeout) as response:  # noqa: S310 - see endpoint()
            return response.read(MAX_ANSWER_BYTES + 1), None
    except urllib.error.HTTPError as exc:
        exc.close()
        meaning = _STATUS_MEANING.get(exc.code, "the server could not answer the query")
        return b"", f"The server answered HTTP {exc.code}: {meaning}."
    except (urllib.error.URLError, OSError) as exc:
        return b"", f"Could not reach the server ({type(getattr(exc, 'reason', exc)).__name__})."


def _parse(raw: bytes, request: RagQuery) -> QueryOutput:
    if len(raw) > MAX_ANSWER_BYTES:
        raise RemoteQueryError("The server's answer is larger than the CLI accepts.")
    try:
        answer: ServerQueryAnswer | None = ServerQueryAnswer.model_validate_json(raw)
    except ValidationError:  # its message quotes the body
        answer = None
    if answer is None:
        raise RemoteQueryError("The server's answer is not a runiq query result.")
    return QueryOutput(index_name=request.index_name, mode=answer.mode or request.mode, hits=answer.hits)

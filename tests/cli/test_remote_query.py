"""``runiq query --server URL`` against a fake ``runiq serve`` on 127.0.0.1 that implements only the query
endpoint contract: ``POST {base}/api/rag/indexes/{name}/query``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from runiq.cli.main import app
from runiq.cli.remote import RemoteQueryError, endpoint

SECRET = "a-long-test-api-key-0123456789"
HIT = {
    "rank": 1,
    "document_id": "team/build.md",
    "chunk_id": "team/build.md#0",
    "raw_score": 0.91,
    "metric": "cosine-similarity",
    "higher_is_better": True,
    "relevance": 0.955,
    "content": "Build error CS1503: argument type does not convert.",
    "provenance": {
        "mode": "hybrid",
        "semantic": {"rank": 1, "raw_score": 0.91, "metric": "cosine-similarity"},
        "lexical": {"rank": 1, "raw_score": 2.5, "metric": "bm25"},
        "fused_score": 0.0328,
        "fused_rank": 1,
    },
    "page": 2,
    "start_offset": 120,
    "end_offset": 171,
}


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: bytes = json.dumps({"hits": [HIT], "mode": "hybrid"}).encode()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            fake.requests.append(
                {"path": self.path, "headers": dict(self.headers), "json": json.loads(self.rfile.read(length))}
            )
            self.send_response(fake.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(fake.body)))
            self.end_headers()
            self.wfile.write(fake.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _query(*arguments: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["query", "notes", "CS1503", *arguments], env=env)


def test_query_asks_the_server_and_prints_its_hits(server: FakeServer, tmp_path: Path, validate: Callable) -> None:
    """No configuration is read (the file does not exist): the server answers; the output is the same shape."""
    result = _query(
        "--server",
        server.url,
        "--mode",
        "hybrid",
        "-k",
        "3",
        "--filter",
        "year=2024",
        "--filter",
        "team=build",
        "--json",
        "-c",
        str(tmp_path / "absent.toml"),
    )
    assert result.exit_code == 0, result.output
    (request,) = server.requests
    assert request["path"] == "/runiq/api/rag/indexes/notes/query"
    assert request["json"] == {
        "text": "CS1503",
        "mode": "hybrid",
        "top_k": 3,
        "filters": {"year": 2024, "team": "build"},
    }
    assert request["headers"]["Content-Type"] == "application/json"
    assert "Origin" not in request["headers"]  # how the dashboard tells a CLI from a cross-site page
    assert "Authorization" not in request["headers"]
    document = json.loads(result.stdout)
    validate(document, "query")
    assert document == {"version": 1, "index_name": "notes", "mode": "hybrid", "hits": [HIT]}


def test_an_older_server_answer_without_positions_has_null_positions(server: FakeServer, validate: Callable) -> None:
    """A server from before pages and offsets answers hits without them: they print as null."""
    old = {key: value for key, value in HIT.items() if key not in {"page", "start_offset", "end_offset"}}
    server.body = json.dumps({"hits": [old], "mode": "hybrid"}).encode()
    result = _query("--server", server.url, "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    validate(document, "query")
    assert document["hits"] == [{**old, "page": None, "start_offset": None, "end_offset": None}]


def test_the_table_is_drawn_from_the_server_answer(server: FakeServer) -> None:
    result = _query("--server", server.url)
    assert result.exit_code == 0, result.output
    assert "team/build.md#0" in result.stdout
    assert "cosine-similarity↑" in result.stdout
    assert "#1 2.5000" in result.stdout


def test_the_api_key_goes_in_a_bearer_header(server: FakeServer) -> None:
    result = _query("--server", server.url, env={"RUNIQ_API_KEY": SECRET})
    assert result.exit_code == 0, result.output
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.output


def test_the_page_url_that_serve_prints_names_the_base_path(server: FakeServer) -> None:
    """`runiq serve` prints http://127.0.0.1:PORT/runiq/; a custom base path is taken from the URL."""
    assert _query("--server", f"{server.url}/runiq/").exit_code == 0
    assert _query("--server", f"{server.url}/admin/rag").exit_code == 0
    assert [r["path"] for r in server.requests] == [
        "/runiq/api/rag/indexes/notes/query",
        "/admin/rag/api/rag/indexes/notes/query",
    ]


@pytest.mark.parametrize(
    ("status", "expected"),
    [(401, "HTTP 401: the server needs an API key"), (403, "HTTP 403"), (404, "no such index"), (500, "HTTP 500")],
)
def test_http_errors_are_one_fixed_line(server: FakeServer, status: int, expected: str) -> None:
    server.status, server.body = status, b'{"title": "\x1b[2J secret body"}'
    result = _query("--server", server.url, env={"RUNIQ_API_KEY": SECRET})
    assert result.exit_code == 1
    assert result.stdout == ""
    assert expected in result.stderr
    for leaked in (SECRET, server.url, "secret body", "\x1b"):
        assert leaked not in result.stderr


@pytest.mark.parametrize("body", [b"not json", b'{"hits": [{"rank": "first"}]}', b"[]"])
def test_an_answer_that_is_not_a_query_result_is_refused(server: FakeServer, body: bytes) -> None:
    server.body = body
    result = _query("--server", server.url, "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "not a runiq query result" in result.stderr


def test_an_unreachable_server_is_one_line(server: FakeServer) -> None:
    url = server.url
    result = _query("--server", url.rsplit(":", 1)[0] + ":1")
    assert result.exit_code == 1
    assert "Could not reach the server" in result.stderr
    assert url.rsplit(":", 1)[0] not in result.stderr


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/", "127.0.0.1:8710", "http://"])
def test_only_http_urls_are_accepted(url: str) -> None:
    with pytest.raises(RemoteQueryError, match="http:// or https://"):
        endpoint(url, "notes")


def test_index_names_are_one_escaped_path_segment() -> None:
    assert endpoint("http://127.0.0.1:8710", "a/b c") == "http://127.0.0.1:8710/runiq/api/rag/indexes/a%2Fb%20c/query"


def test_a_failed_remote_error_keeps_no_context(server: FakeServer) -> None:
    """The error is raised outside the handler: no __cause__ or __context__ holds the URL or the body."""
    from runiq.cli.remote import query_server
    from runiq.rag import RagQuery

    server.status = 401
    with pytest.raises(RemoteQueryError) as caught:
        query_server(server.url, RagQuery(index_name="notes", text="CS1503"))
    assert caught.value.__cause__ is None and caught.value.__context__ is None

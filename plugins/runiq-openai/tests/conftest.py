"""A real OpenAI-compatible HTTP server on 127.0.0.1 (Starlette under uvicorn, in a thread), one per session.

Embeddings come from runiq's hashing embedder, so texts that share words are similar and the
retrieval tests mean something. Each request can be scripted (status, headers, delay, a raw body,
another dimension), and every request is recorded. Its error bodies echo the input and the presented
Authorization header (the API key), as real providers' bodies may, so the tests prove nobody copies them.

Two routes: ``/v1/embeddings`` is OpenAI's API (the key is checked; any ``dimensions`` is honoured), and
``/local/v1/embeddings`` is a local OpenAI-compatible server as Ollama, vLLM or TEI serve one: no key
checked, its own models at their own lengths, and a ``dimensions`` parameter refused (vLLM's answer
for a model without Matryoshka training).
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from runiq.rag.providers import HashingEmbedder
from runiq.rag.testing import CANARY
from runiq.rag.testing.loopback import Reply, ScriptedFakeServer, serve_on_loopback
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from runiq_openai import OpenAiEmbeddingClient, OpenAiEmbeddingOptions
from runiq_openai.client import PROBE_TEXT
from runiq_openai.plugin import open_openai_embedding


@pytest.fixture
def canary() -> str:
    """runiq's canary string (pytest_plugins is only allowed in the rootdir conftest)."""
    return CANARY


API_KEY = "sk-runiq-test-KEYCANARY-4f1d9e07"
KEY_ENV = "RUNIQ_TEST_OPENAI_API_KEY"
NATIVE = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}
LOCAL_MODELS = {"nomic-embed-text": 768, "all-minilm": 384}


@dataclass
class Scripted(Reply):
    """How the server answers one request (the next one not yet answered)."""

    dimensions: int | None = None
    shuffle: bool = False
    floats: bool = False


@dataclass(frozen=True)
class Recorded:
    inputs: list[Any]
    model: str | None
    dimensions: int | None
    encoding_format: str | None
    authorization: str | None
    retry_count: str | None
    local: bool


class FakeOpenAiServer(ScriptedFakeServer[Scripted]):
    """Tests reach the helpers through the fixture (conftest modules are not importable by name)."""

    Scripted = Scripted
    api_key = API_KEY

    def __init__(self) -> None:
        super().__init__(Scripted)
        self.requests: list[Recorded] = []
        self.app = Starlette(
            routes=[
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/local/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )

    @property
    def url(self) -> str:
        """OpenAI's API, as a base_url."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def local_url(self) -> str:
        """A local OpenAI-compatible server (no key, its own models), as a base_url."""
        return f"http://127.0.0.1:{self.port}/local/v1"

    @property
    def probes(self) -> list[Recorded]:
        return [r for r in self.requests if r.inputs == [PROBE_TEXT]]

    @property
    def sizes(self) -> list[int]:
        return [len(r.inputs) for r in self.requests]

    @staticmethod
    def expected(texts: list[str], dims: int) -> np.ndarray:
        """What the server computes for ``texts`` (empty strings arrive as one space)."""
        return HashingEmbedder(dims).embed_sync([t or " " for t in texts])

    def reset(self) -> None:
        super().reset()
        self.requests.clear()

    async def _embeddings(self, request: Request) -> Response:
        payload = await request.json()
        inputs = payload.get("input")
        local = request.url.path.startswith("/local/")
        self.requests.append(
            Recorded(
                inputs=list(inputs) if isinstance(inputs, list) else [inputs],
                model=payload.get("model"),
                dimensions=payload.get("dimensions"),
                encoding_format=payload.get("encoding_format"),
                authorization=request.headers.get("authorization"),
                retry_count=request.headers.get("x-stainless-retry-count"),
                local=local,
            )
        )
        reply = await self.next_reply()
        if local:
            return self._answer_locally(payload, inputs, reply)
        return self._answer(payload, inputs, request.headers.get("authorization"), reply)

    def _answer_locally(self, payload: dict[str, Any], inputs: Any, reply: Scripted) -> Response:
        if payload.get("dimensions") is not None:
            message = f"Model does not support matryoshka representation: {inputs!r}"
            return JSONResponse({"error": {"message": message}}, status_code=400)
        native = LOCAL_MODELS.get(payload.get("model"))
        if native is None:
            return JSONResponse({"error": {"message": f"model not found, try pulling it first: {inputs!r}"}}, 404)
        return self._answer(payload | {"dimensions": native}, inputs, f"Bearer {API_KEY}", reply)

    def _answer(self, payload: dict[str, Any], inputs: Any, authorization: str | None, reply: Scripted) -> Response:
        if authorization != f"Bearer {API_KEY}":
            message = f"Incorrect API key provided: {authorization}."
            return JSONResponse({"error": {"message": message, "code": "invalid_api_key"}}, status_code=401)
        if reply.status != 200:
            message = f"failed while embedding {inputs!r} for {authorization}"
            return JSONResponse({"error": {"message": message}}, status_code=reply.status, headers=reply.headers)
        if reply.body is not None:
            return Response(reply.body, media_type="application/json")
        valid = isinstance(inputs, list) and 1 <= len(inputs) <= 2048
        if not valid or not all(isinstance(t, str) and t for t in inputs):
            return JSONResponse({"error": {"message": f"'$.input' is invalid: {inputs!r}"}}, status_code=400)
        dims = reply.dimensions or payload.get("dimensions") or NATIVE.get(payload.get("model"))
        if dims is None:
            return JSONResponse({"error": {"message": "model not found"}}, status_code=404)
        vectors = HashingEmbedder(dims).embed_sync(inputs)
        data = [
            {"object": "embedding", "index": i, "embedding": _encode(v, payload, reply.floats)}
            for i, v in enumerate(vectors)
        ]
        if reply.shuffle:
            random.Random(7).shuffle(data)
        usage = {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}
        return JSONResponse({"object": "list", "data": data, "model": payload.get("model"), "usage": usage})


def _encode(vector: np.ndarray, payload: dict[str, Any], floats: bool) -> Any:
    if payload.get("encoding_format") == "base64" and not floats:
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(x) for x in vector]


@pytest.fixture(scope="session")
def openai_server() -> Iterator[FakeOpenAiServer]:
    fake = FakeOpenAiServer()
    with serve_on_loopback(fake.app, name="fake-openai") as port:
        fake.port = port
        yield fake


@pytest.fixture
def server(openai_server: FakeOpenAiServer) -> FakeOpenAiServer:
    openai_server.reset()
    return openai_server


@pytest.fixture
def api_key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    return KEY_ENV


OpenClient = Callable[..., AbstractAsyncContextManager[OpenAiEmbeddingClient]]


@pytest.fixture
def open_client(server: FakeOpenAiServer, api_key_env: str) -> OpenClient:
    """``async with open_client(**options) as client``: the plugin's own factory against the fake server."""

    def _open(**overrides: Any) -> AbstractAsyncContextManager[OpenAiEmbeddingClient]:
        values: dict[str, Any] = {"base_url": server.url, "api_key_env": api_key_env, **overrides}
        return open_openai_embedding(OpenAiEmbeddingOptions(**values))

    return _open

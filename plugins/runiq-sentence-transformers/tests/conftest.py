"""One all-MiniLM-L6-v2 per session (loading torch takes seconds); the network is never allowed.

``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` are set before sentence-transformers is imported, and
the ``no_network`` fixture makes any socket connection fail loudly, so a test that passes shows the
code under test made no network attempt.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

from runiq.rag.testing import CANARY

from runiq_sentence_transformers import (
    SentenceTransformerEmbedder,
    SentenceTransformerOptions,
    load_model,
    resolve_model_path,
)


@pytest.fixture
def canary() -> str:
    """runiq's canary string (pytest_plugins is only allowed in the rootdir conftest)."""
    return CANARY


class NetworkAttempted(AssertionError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise NetworkAttempted("a network connection was attempted")


def _guard(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(socket.socket, "connect", _refuse)
    patch.setattr(socket.socket, "connect_ex", _refuse)
    patch.setattr(socket, "create_connection", _refuse)
    patch.setattr(socket, "getaddrinfo", _refuse)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any socket connection or DNS lookup in the test raises NetworkAttempted."""
    _guard(monkeypatch)


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The packaged all-MiniLM-L6-v2, loaded once with the network blocked."""
    with pytest.MonkeyPatch.context() as patch:
        _guard(patch)
        model = load_model(resolve_model_path(SentenceTransformerOptions()), "cpu")
    return model


@pytest.fixture(scope="session")
def embedder(minilm: Any) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(minilm, model_name=SentenceTransformerOptions().identity)

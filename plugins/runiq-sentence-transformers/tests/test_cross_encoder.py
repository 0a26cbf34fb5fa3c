"""The local cross-encoder reranker: mechanics only, on a cross-encoder built here from the packaged MiniLM.

No cross-encoder model is packaged, so the module builds one once: all-MiniLM-L6-v2's transformer under a
freshly initialised single-logit classification head (``num_labels=1``), saved to a temporary directory
and loaded from there like any local model. Its head is random, so its scores say nothing about
relevance: these tests check loading, the logit-to-[0, 1] mapping, threading, errors and the host
wiring, never ranking quality.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import structlog
from runiq.errors import ProviderError, ProviderUnavailableError
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexRuntime,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._context import RagContextAssembler, RagContextOptions, RagRerankingOutcome, RerankingOptions
from runiq.rag._reranking import index_reranker_resolver
from runiq.rag.providers import ProviderKind, RagAnswerability, RagRerankCandidate, RagReranker, RagRerankRequest
from runiq.rag.testing.reranker_contract import RerankerContract

import runiq_sentence_transformers.plugin
from runiq_sentence_transformers import packaged_model_path
from runiq_sentence_transformers.cross_encoder import (
    CrossEncoderOptions,
    CrossEncoderReranker,
    CrossEncoderReranking,
    load_cross_encoder,
    open_cross_encoder,
    sigmoid,
)


def _refuse(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("a network connection was attempted")


def _offline(patch: pytest.MonkeyPatch) -> None:
    for target, name in ((socket.socket, "connect"), (socket.socket, "connect_ex"), (socket, "create_connection")):
        patch.setattr(target, name, _refuse)
    patch.setattr(socket, "getaddrinfo", _refuse)


def _save_classifier(directory: Path, num_labels: int) -> Path:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source = packaged_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=num_labels, local_files_only=True)
    AutoTokenizer.from_pretrained(source, local_files_only=True).save_pretrained(directory)
    model.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM with a random single-logit head, saved locally (built once per module, network blocked)."""
    import torch

    torch.manual_seed(1234)
    with pytest.MonkeyPatch.context() as patch:
        _offline(patch)
        return _save_classifier(tmp_path_factory.mktemp("minilm-cross-encoder"), num_labels=1)


@pytest.fixture(scope="module")
def cross_encoder(model_dir: Path) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        _offline(patch)
        return load_cross_encoder(model_dir, CrossEncoderOptions(model_path=str(model_dir)))


@pytest.fixture
def reranker(cross_encoder: Any) -> CrossEncoderReranker:
    return CrossEncoderReranker(cross_encoder, batch_size=8)


class TestCrossEncoderContract(RerankerContract):
    # A random head cannot rank, and this plugin does not claim it can: the kit's ordering test is not
    # collected at all (rather than reported as skipped). Every other contract rule applies.
    ranks_related_above_unrelated = False
    test_related_candidate_outranks_unrelated = None  # type: ignore[assignment]

    @pytest.fixture
    def reranker(self, cross_encoder: Any) -> RagReranker:
        reranker = CrossEncoderReranker(cross_encoder)
        assert isinstance(reranker, RagReranker)
        return reranker


def _request(query: str, *contents: str) -> RagRerankRequest:
    return RagRerankRequest(
        query=query,
        candidates=tuple(
            RagRerankCandidate(document_id=f"d{i}", chunk_id=f"d{i}#0", content=text, original_rank=i)
            for i, text in enumerate(contents, start=1)
        ),
    )


CONTENTS = ("The remote work policy allows three days a week.", "Lunch is at noon.", "")


async def test_relevance_is_the_sigmoid_of_the_models_logit(reranker, cross_encoder) -> None:
    """relevance = 1 / (1 + exp(-logit)) of the model's own logit, in order, the same as CrossEncoder's
    default activation for a single-label model; answerability UNKNOWN."""
    from torch import nn

    response = await reranker.rerank(_request("remote work policy", *CONTENTS))
    pairs = [("remote work policy", text) for text in CONTENTS]
    logits = cross_encoder.predict(pairs, activation_fn=nn.Identity(), show_progress_bar=False)
    relevances = [r.relevance for r in response.candidates]
    np.testing.assert_allclose(relevances, 1 / (1 + np.exp(-logits.astype(np.float64))), rtol=1e-12)
    np.testing.assert_allclose(relevances, cross_encoder.predict(pairs, show_progress_bar=False), atol=1e-6)
    assert [r.document_id for r in response.candidates] == ["d1", "d2", "d3"]
    assert all(isinstance(r, float) for r in relevances)
    assert {r.answerability for r in response.candidates} == {RagAnswerability.UNKNOWN}
    assert response.answerability is RagAnswerability.UNKNOWN


def test_sigmoid_is_stable_and_exact_at_the_centre() -> None:
    """0 -> 0.5, huge logits -> 0 and 1 without overflow warnings, monotonic, the textbook values."""
    logits = np.array([-1e6, -40.0, -2.0, 0.0, 2.0, 40.0, 1e6])
    mapped = sigmoid(logits)
    assert mapped[3] == 0.5
    assert mapped[0] == 0.0
    assert mapped[-1] == 1.0
    assert np.all(np.diff(mapped) >= 0)
    np.testing.assert_allclose(sigmoid([-2.0, 2.0]), [1 / (1 + np.exp(2.0)), 1 / (1 + np.exp(-2.0))], rtol=1e-14)


class RecordingModel:
    """Stands in for a CrossEncoder to observe how the reranker calls it."""

    def __init__(self, delay: float = 0.0, fail_with: str | None = None, width: int | None = None) -> None:
        self.delay = delay
        self.fail_with = fail_with
        self.width = width
        self.calls: list[tuple[list[tuple[str, str]], dict[str, Any], bool]] = []
        self.active = 0
        self.max_active = 0
        self._guard = threading.Lock()

    def predict(self, pairs: list[tuple[str, str]], **kwargs: Any) -> np.ndarray:
        with self._guard:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            self.calls.append((pairs, kwargs, threading.current_thread() is threading.main_thread()))
            time.sleep(self.delay)
            if self.fail_with is not None:
                raise RuntimeError(f"{self.fail_with}: {pairs}")
            return np.zeros(self.width if self.width is not None else len(pairs), dtype=np.float32)
        finally:
            with self._guard:
                self.active -= 1


async def test_predict_runs_in_a_worker_thread_with_the_options() -> None:
    """The event loop keeps running during a slow predict; logits are asked for (identity), no progress bar."""
    model = RecordingModel(delay=0.3)
    reranker = CrossEncoderReranker(model, batch_size=7)  # type: ignore[arg-type]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    response = await reranker.rerank(_request("q", "a", "b"))
    task.cancel()
    assert ticks >= 5  # the loop ran while the model "computed" for 0.3 s
    [(pairs, kwargs, on_main_thread)] = model.calls
    assert not on_main_thread
    assert pairs == [("q", "a"), ("q", "b")]
    assert kwargs["batch_size"] == 7
    logits = object()
    assert kwargs["activation_fn"](logits) is logits
    assert kwargs["show_progress_bar"] is False
    assert [r.relevance for r in response.candidates] == [0.5, 0.5]


async def test_one_predict_at_a_time_even_after_a_cancelled_call() -> None:
    """Concurrent calls, and a call whose caller timed out, never run two predicts side by side."""
    model = RecordingModel(delay=0.15)
    reranker = CrossEncoderReranker(model)  # type: ignore[arg-type]
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await reranker.rerank(_request("q", "a"))
    await asyncio.gather(*(reranker.rerank(_request("q", "a")) for _ in range(3)))
    assert model.max_active == 1
    assert len(model.calls) == 4


async def test_a_failing_model_gives_a_content_free_error(canary, caplog) -> None:
    """The model's exception quotes the pairs; the ProviderError, its chain and the logs do not."""
    caplog.set_level(logging.DEBUG)
    reranker = CrossEncoderReranker(RecordingModel(fail_with="tokenizer exploded"))  # type: ignore[arg-type]
    with structlog.testing.capture_logs() as events, pytest.raises(ProviderError) as caught:
        await reranker.rerank(_request(f"{canary} query", f"content {canary}"))
    error = caught.value
    assert error.__cause__ is None
    assert error.__context__ is None
    rendered = "".join(traceback.format_exception(error)) + repr(error.args) + repr(vars(error))
    assert canary not in rendered
    assert canary not in caplog.text + repr(events)
    assert events[-1]["error"] == "RuntimeError"


async def test_a_model_with_the_wrong_output_shape_is_an_error() -> None:
    reranker = CrossEncoderReranker(RecordingModel(width=5))  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match="failed to score"):
        await reranker.rerank(_request("q", "a", "b"))


@pytest.mark.parametrize("name", ["cross-encoder/ms-marco-MiniLM-L6-v2", "ms-marco-MiniLM-L6-v2"])
async def test_hub_names_are_refused_without_the_network(no_network, name) -> None:
    """A name that is not an existing local directory fails on open, never downloads; the message omits it."""
    with pytest.raises(RagConfigurationError, match="never downloaded") as caught:
        async with open_cross_encoder(CrossEncoderOptions(model_path=name)):
            pass
    assert name not in str(caught.value)


async def test_a_local_directory_loads_offline(no_network, model_dir) -> None:
    async with open_cross_encoder(CrossEncoderOptions(model_path=str(model_dir), max_length=64)) as reranker:
        response = await reranker.rerank(_request("q", "a"))
    assert 0.0 <= response.candidates[0].relevance <= 1.0


async def test_a_multi_score_model_is_refused(no_network, tmp_path) -> None:
    """A classifier with two labels is not a single-score cross-encoder: a configuration error on open."""
    _save_classifier(tmp_path, num_labels=2)
    with pytest.raises(RagConfigurationError, match="num_labels=1"):
        async with open_cross_encoder(CrossEncoderOptions(model_path=str(tmp_path))):
            pass


async def test_a_broken_model_directory_is_unavailable_without_context(no_network, tmp_path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ProviderUnavailableError, match="could not be loaded") as caught:
        async with open_cross_encoder(CrossEncoderOptions(model_path=str(tmp_path))):
            pass
    assert caught.value.__context__ is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"model_path": "https://huggingface.co/cross-encoder/ms-marco-MiniLM-L6-v2"}, "model_path"),
        ({"model_path": "  "}, "model_path"),
        ({"model_path": "/m", "device": "tpu"}, "device"),
        ({"model_path": "/m", "batch_size": 0}, "batch_size"),
        ({"model_path": "/m", "max_length": 4}, "max_length"),
    ],
)
def test_invalid_selections_fail_naming_the_option(kwargs, field) -> None:
    with pytest.raises(RagConfigurationError, match=field) as caught:
        CrossEncoderReranking(**kwargs)
    assert caught.value.__context__ is None
    assert "huggingface" not in str(caught.value)


def test_the_selection_shows_no_path() -> None:
    selection = CrossEncoderReranking(model_path=Path("/models/secret-project/ce"), model_name="ms-marco")
    assert selection.provider_name == "sentence-transformers"
    assert selection.display_name == "Sentence Transformers cross-encoder ms-marco (cpu)"
    assert selection.provider_options()["model_path"] == "/models/secret-project/ce"
    assert "secret-project" not in CrossEncoderReranking(model_path="/models/secret-project/ce").display_name


async def test_a_host_reranks_with_the_local_model_without_approval(no_network, model_dir, cross_encoder) -> None:
    """Registered as a local reranker: no approved=True needed; the policy runs it and keeps its scores."""
    documents = [
        RagDocument(document_id="hr", content="Remote work policy: three days a week at home."),
        RagDocument(document_id="travel", content="Travel policy: receipts within thirty days."),
    ]
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_sentence_transformers.plugin])
    assert builder.providers.get(ProviderKind.RERANKER, "sentence-transformers").remote is False
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(documents)
                .use_embedding(HashingEmbedding(dimensions=16))
                .use_in_memory_vector_store()
                .use_reranker(CrossEncoderReranking(model_path=model_dir))
            ),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(host.services.get(IndexRuntime))
        )
        query = RagQuery(index_name="docs", text="policy", mode=RagRetrievalMode.LEXICAL)
        result = await assembler.assemble(query, RagContextOptions(reranking=RerankingOptions(enabled=True)))
    assert result.reranking.outcome is RagRerankingOutcome.SUCCEEDED
    assert result.reranking.provider == "sentence-transformers"
    direct = CrossEncoderReranker(cross_encoder).score_sync([("policy", d.content) for d in documents])
    scores = {item.document_id: item.rerank.relevance for item in result.context if item.rerank is not None}
    assert scores == pytest.approx({"hr": direct[0], "travel": direct[1]}, abs=1e-6)

"""The OpenTelemetry SDK for these tests: one global tracer and meter provider per session, read in memory.

runiq uses only the global providers (as an instrumented library should), and OpenTelemetry lets a
process set each of them once, so the session installs them once and every test starts from an empty
span exporter and a drained metric reader (delta temporality: each read holds only what came since).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_DELTA = {Counter: AggregationTemporality.DELTA, Histogram: AggregationTemporality.DELTA}


@pytest.fixture(scope="session")
def _otel_session() -> tuple[InMemorySpanExporter, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # another suite may have installed one already: reuse it
        provider = TracerProvider(resource=Resource.create({"service.name": "runiq-tests"}))
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader(preferred_temporality=_DELTA)
    assert not isinstance(metrics.get_meter_provider(), MeterProvider), "a meter provider is already installed"
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader], resource=provider.resource))
    return exporter, reader


@pytest.fixture
def span_exporter(_otel_session: tuple[InMemorySpanExporter, InMemoryMetricReader]) -> Iterator[InMemorySpanExporter]:
    exporter = _otel_session[0]
    exporter.clear()
    yield exporter
    exporter.clear()


@pytest.fixture
def metric_reader(_otel_session: tuple[InMemorySpanExporter, InMemoryMetricReader]) -> InMemoryMetricReader:
    reader = _otel_session[1]
    reader.get_metrics_data()  # drain what earlier tests recorded
    return reader


@pytest.fixture
def finished_spans(span_exporter: InMemorySpanExporter) -> Callable[[], dict[str, list[ReadableSpan]]]:
    """``finished_spans()`` -> the spans exported so far, by name."""

    def by_name() -> dict[str, list[ReadableSpan]]:
        out: dict[str, list[ReadableSpan]] = {}
        for span in span_exporter.get_finished_spans():
            out.setdefault(span.name, []).append(span)
        return out

    return by_name


@pytest.fixture
def metric_points(metric_reader: InMemoryMetricReader) -> Callable[[str], list[tuple[dict[str, Any], Any]]]:
    """``metric_points(name)`` -> ``[(attributes, point)]`` recorded since the last call (or the test's start)."""
    collected: list[Any] = []

    def points(name: str) -> list[tuple[dict[str, Any], Any]]:
        data = metric_reader.get_metrics_data()
        if data is not None:
            collected.append(data)
        return [
            (dict(point.attributes or {}), point)
            for batch in collected
            for resource in batch.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
        ]

    return points

"""The worker's pieces that can run in-process."""

from __future__ import annotations

import io
import resource

import pytest

from runiq.rag._loaders import deferred, worker


def test_a_limit_the_system_refuses_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS refuses RLIMIT_AS; the child must still load the file rather than fail every one."""
    calls: list[tuple[int, tuple[int, int]]] = []

    def refuse(kind: int, limits: tuple[int, int]) -> None:
        calls.append((kind, limits))
        raise ValueError("not supported")

    monkeypatch.setattr(resource, "setrlimit", refuse)
    worker._limit(resource.RLIMIT_AS, 1024**3)
    worker._limit(resource.RLIMIT_CPU, 0)  # zero means no limit: not even asked
    assert calls == [(resource.RLIMIT_AS, (1024**3, 1024**3))]


def test_frames_round_trip_and_end_cleanly() -> None:
    stream = io.BytesIO()
    worker.write_frame(stream, b"payload")
    worker.write_frame(stream, b"")
    stream.seek(0)
    assert [worker.read_frame(stream), worker.read_frame(stream), worker.read_frame(stream)] == [b"payload", b"", None]
    assert worker.read_frame(io.BytesIO(worker.HEADER.pack(10) + b"short")) is None


def test_a_deferred_import_that_fails_is_left_to_the_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor must keep serving: the loader's own import fails its file (``failed``)."""
    monkeypatch.setattr(deferred, "_pending", [])
    deferred.import_when_loading("runiq_no_such_parser", "colorsys", "colorsys")
    assert deferred._pending == ["runiq_no_such_parser", "colorsys"]
    deferred.import_deferred()
    assert deferred._pending == []

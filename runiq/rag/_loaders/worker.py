"""The loader worker: ``python -m runiq.rag._loaders.worker TIMEOUT_SECONDS MEMORY_BYTES``.

A warm supervisor that forks one short-lived child per file. The supervisor reads length-prefixed
requests on stdin (a pickle of the loader, the bytes, the options and the character budget, from its
own parent), unpickles them (so loader modules, and the parsers they import when loading, are imported
once, before the fork: :mod:`runiq.rag._loaders.deferred`), forks, and waits
for the child's reply until the time budget is spent; then it kills the child (``SIGKILL``) and
answers ``timeout``. The child caps its address space (``RLIMIT_AS``: a decompression bomb that slips
past the size checks ends in ``MemoryError``, reported as ``too_large``) and its CPU time, runs the
loader, writes its reply to a pipe and exits. The supervisor itself never parses a document, so a
hostile file cannot stall, crash or bloat it, and a fresh fork costs milliseconds where a fresh
interpreter that imports runiq costs seconds.

Replies are JSON, never pickles: the child parsed a hostile file, so what it sends back is data the
parent validates, not objects it would run. The real stdout and stderr go to /dev/null, so a loader
that prints (or a parser that warns with a quote of the document) cannot corrupt the protocol or leak
content. POSIX only (``fork``, ``resource``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import pickle
import resource
import select
import signal
import struct
import sys
import time
from typing import IO, Any

from runiq.rag._loaders.base import LoadedDocument, LoadOptions
from runiq.rag._loaders.deferred import import_deferred
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = ["HEADER", "encode_document", "load_checked", "main", "read_frame", "write_frame"]

HEADER = struct.Struct(">I")  # payload length in front of every frame
_READ_CHUNK = 1024 * 1024


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One frame's payload, or None at end of input."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    size = HEADER.unpack(header)[0]
    payload = stream.read(size)
    return payload if len(payload) == size else None


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def encode_document(document: LoadedDocument) -> dict[str, Any]:
    return {
        "text": document.text,
        "title": document.title,
        "content_type": document.content_type,
        "pages": [[p.number, p.start, p.end] for p in document.pages],
        "headings": [[h.level, h.title, h.start] for h in document.headings],
        "metadata": dict(document.metadata),
    }


def _failure(code: LoadFailureCode) -> bytes:
    return json.dumps({"failure": code.value}).encode()


def load_checked(loader: Any, data: bytes, options: LoadOptions, max_characters: int) -> LoadedDocument:
    """Run the loader and check what it gave: the one rule for a forked child and an in-process load.

    Raises:
        DocumentLoadError: the loader's own code; ``too_large`` for a ``MemoryError`` or text over
            ``max_characters``; ``malformed`` for a ``RecursionError``; ``empty`` for blank text;
            ``failed`` for anything else. Raised outside the ``except`` block: a parser's exception
            may quote the document.
    """
    code: LoadFailureCode | None = None
    try:
        document = loader.load(data, options=options)
    except DocumentLoadError as exc:
        code = exc.code
    except MemoryError:
        code = LoadFailureCode.TOO_LARGE
    except RecursionError:
        code = LoadFailureCode.MALFORMED
    except Exception:
        code = LoadFailureCode.FAILED
    else:
        code = _check(document, max_characters)
        if code is None and isinstance(document, LoadedDocument):
            return document
    raise DocumentLoadError(code or LoadFailureCode.FAILED)


def _reply(loader: Any, data: bytes, options: LoadOptions, max_characters: int) -> bytes:
    """Run the loader (in the forked child) and encode what it gave or why it failed."""
    code: LoadFailureCode | None = None
    try:
        document = load_checked(loader, data, options, max_characters)
        return json.dumps({"document": encode_document(document)}, ensure_ascii=False).encode("utf-8")
    except DocumentLoadError as exc:
        code = exc.code
    except MemoryError:  # encoding the reply
        code = LoadFailureCode.TOO_LARGE
    except Exception:
        code = LoadFailureCode.FAILED
    return _failure(code)


def _check(document: object, max_characters: int) -> LoadFailureCode | None:
    if not isinstance(document, LoadedDocument):
        return LoadFailureCode.FAILED
    if len(document.text) > max_characters:
        return LoadFailureCode.TOO_LARGE
    if not document.text.strip():
        return LoadFailureCode.EMPTY
    return None


def _child(write_fd: int, request: tuple[Any, bytes, LoadOptions, int], timeout: float, memory: int) -> None:
    """The forked child: limits, load, reply, exit. Never returns."""
    status = 1
    try:
        _limit(resource.RLIMIT_AS, memory)
        _limit(resource.RLIMIT_CPU, math.ceil(timeout) + 1)  # a backstop should the supervisor be gone
        body = _reply(*request)
        with os.fdopen(write_fd, "wb") as out:
            out.write(body)
        status = 0
    finally:
        os._exit(status)


def _limit(kind: int, value: int) -> None:
    """Lower a resource limit where the system enforces it (macOS ignores ``RLIMIT_AS``)."""
    if value > 0:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (value, value))


def _collect(read_fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes the pipe, or None when the deadline passes first."""
    chunks: list[bytes] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([read_fd], [], [], remaining)[0]:
            return None
        chunk = os.read(read_fd, _READ_CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class _Supervisor:
    def __init__(self, timeout: float, memory: int, requests: IO[bytes], replies: IO[bytes]) -> None:
        self._timeout = timeout
        self._memory = memory
        self._requests = requests
        self._replies = replies

    def serve(self) -> None:
        write_frame(self._replies, b"ready")  # imports are done
        while (payload := read_frame(self._requests)) is not None:
            write_frame(self._replies, self._load(payload))

    def _load(self, payload: bytes) -> bytes:
        try:
            request = pickle.loads(payload)  # noqa: S301 - our parent's request, never document data
        except Exception:
            return _failure(LoadFailureCode.FAILED)  # a loader class this interpreter cannot import
        import_deferred()  # the parsers the loader's module imports when it loads, once, before the fork
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            self._requests.close()
            self._replies.close()
            _child(write_fd, request, self._timeout, self._memory)
        os.close(write_fd)
        try:
            body = _collect(read_fd, time.monotonic() + self._timeout)
        finally:
            os.close(read_fd)
        if body is None:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if body is None:
            return _failure(LoadFailureCode.TIMEOUT)
        if status != 0 or not body:
            return _failure(LoadFailureCode.FAILED)  # the child crashed or was killed (its CPU or memory cap)
        return body


def main(argv: list[str]) -> int:
    timeout, memory = float(argv[1]), int(argv[2])
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)  # a loader reads nothing from, and writes nothing to, the protocol pipes
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    _Supervisor(timeout, memory, requests, replies).serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

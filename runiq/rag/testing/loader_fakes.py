"""Misbehaving document loaders for budget and isolation tests. Importable by name, so they run in a
:class:`~runiq.rag._loaders.LoaderPool` worker like any plugin's loader."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from runiq.rag._loaders.base import LoadedDocument, LoadOptions
from runiq.rag._loaders.deferred import import_when_loading
from runiq.rag.testing.fakes import CANARY

__all__ = [
    "CrashingLoader",
    "DeferredImportProbe",
    "HungryLoader",
    "LeakyLoader",
    "NoisyLoader",
    "ProcessLoader",
    "SleepyLoader",
    "SpinningLoader",
]

_PROBED = "graphlib"  # a standard-library module nothing else imports
import_when_loading(_PROBED)


@dataclass(frozen=True, slots=True)
class _Fake:
    name: str = "fake"
    extensions: frozenset[str] = frozenset({".fake"})
    media_types: frozenset[str] = frozenset()


class SpinningLoader(_Fake):
    """Never returns: a pure-Python busy loop that holds the GIL, as a parser stuck on a hostile file."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        counter = 0
        while True:
            counter += 1


class HungryLoader(_Fake):
    """Asks for ``len(data)`` GiB at once, as a decompression bomb inflating in memory."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        block = bytearray(len(data) * 1024 * 1024 * 1024)
        return LoadedDocument(text=str(len(block)))


class CrashingLoader(_Fake):
    """Ends its process without a word, as a parser's native extension crashing."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        os._exit(3)


class LeakyLoader(_Fake):
    """Fails with the document's content in its exception, which must go nowhere."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        raise ValueError(f"cannot parse {data.decode(errors='replace')} {CANARY}")


class NoisyLoader(_Fake):
    """Prints the content to stdout and stderr before answering, as a chatty parser does."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text = data.decode()
        print(f"parsing {text} {CANARY}")
        print(f"warning {text} {CANARY}", file=sys.stderr)
        return LoadedDocument(text=text, title="noisy")


class ProcessLoader(_Fake):
    """Answers the id of the process that ran it: tells a load in a thread from one in a worker."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        return LoadedDocument(text=str(os.getpid()))


class SleepyLoader(_Fake):
    """Sleeps ``len(data) / 10`` seconds without holding the GIL, then answers: a slow loader in a thread."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        time.sleep(len(data) / 10)
        return LoadedDocument(text="slept")


class DeferredImportProbe(_Fake):
    """Answers whether the module its module names with ``import_when_loading`` was imported before
    ``load`` began (in a worker: by the supervisor, before it forked the child)."""

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        return LoadedDocument(text="imported" if _PROBED in sys.modules else "not imported")

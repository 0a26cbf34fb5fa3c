"""File stamps: when a file may be taken as unchanged without reading it.

As git, rsync and make do, a regular file's size and modification time (in nanoseconds) stand for its
content: a directory source lists each candidate with ``size:mtime_ns:salt`` (:func:`file_stamp`), where
the salt (:func:`loader_salt`) covers what else decides the document the file becomes: the source (its
root, pattern and limits), the loader that reads the file (its class, configuration, ``version`` if it
has one, the plugin and distribution version that registered it) and runiq's version. Ingestion folds
in the index's configuration fingerprint (what the content hash folds in) and keeps the result beside
the content hash; a file whose stamp equals the stored one is not read.

Racy timestamps: a file modified in the same clock tick as it was listed (or read) could keep its
modification time while its content changes after the read. A stamp is therefore only given to a file
whose modification time is at least :data:`RACY_NANOSECONDS` older than the moment it was listed (git's
"racily clean" rule, with a margin for coarse file-system clocks); a recent or future timestamp gives
no stamp, and the file is read, this run and the next, until its timestamp is safely old. Symlinks and
anything but a regular file get no stamp either: they are always read.

What a stamp cannot see: a file rewritten with the same size whose modification time was put back
(``touch -d``, ``os.utime``, an archive extracted over it). Change any stamp field (``touch`` the file)
or the configuration to make ingestion read it again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import stat
import sys
from dataclasses import fields, is_dataclass

import runiq
from runiq.rag._loaders.registry import LoaderSpec

__all__ = ["RACY_NANOSECONDS", "file_stamp", "loader_salt"]

# A timestamp younger than this, when listed, is not trusted: FAT keeps two-second times, others keep
# one second or finer, and a network file system's clock may be a little off ours.
RACY_NANOSECONDS = 2_000_000_000


def file_stamp(info: os.stat_result, salt: str, now_ns: int) -> str | None:
    """The stamp of a file from its ``lstat``, listed at ``now_ns``; None when it must be read."""
    if not stat.S_ISREG(info.st_mode) or info.st_mtime_ns > now_ns - RACY_NANOSECONDS:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{salt}"


def loader_salt(source: str, spec: LoaderSpec) -> str:
    """A short digest of what besides the file decides its document: ``source`` (the source's identity
    and limits) and the loader."""
    loader = spec.loader
    kind = type(loader)
    names: list[str] = [f.name for f in fields(loader)] if is_dataclass(loader) else []
    configuration = ",".join(f"{name}={_canonical(getattr(loader, name))}" for name in names)
    parts = (
        source,
        f"{kind.__module__}.{kind.__qualname__}",
        configuration,
        str(getattr(loader, "version", "")),
        spec.plugin,
        _distribution_version(kind.__module__),
        runiq.__version__,
    )
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _canonical(value: object) -> str:
    """``repr`` with sets in sorted order, at any depth (inside containers and dataclasses): a set's own
    order follows the process's string hash seed, and a salt that changed with it would read every file
    again after each restart."""
    if is_dataclass(value) and not isinstance(value, type):
        values = ", ".join(f"{f.name}={_canonical(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__qualname__}({values})"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_canonical(item) for item in value)) + "}"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "(" + ", ".join(_canonical(item) for item in value) + ")"
    if isinstance(value, dict):
        pairs = sorted(f"{_canonical(key)}: {_canonical(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


@functools.cache
def _distribution_version(module: str) -> str:
    """The installed version of the distribution that provides ``module``, found by the plugin naming
    convention (``runiq_postgresql`` is ``runiq-postgresql``) or the package's ``__version__`` ('' when
    neither is known). runiq's own loaders are covered by runiq's version."""
    top = module.partition(".")[0]
    if top == "runiq":
        return ""
    for name in dict.fromkeys((top, top.replace("_", "-"))):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return str(getattr(sys.modules.get(top), "__version__", ""))

"""The loader registry that plugins fill through ``runiq_register_loaders``."""

from __future__ import annotations

import pickle
import re
from dataclasses import dataclass
from pathlib import PurePath

from runiq.rag._errors import RagConfigurationError
from runiq.rag._loaders.base import DocumentLoader
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = ["LoaderRegistry", "LoaderSpec"]

_EXTENSION = re.compile(r"^(\.[a-z0-9_+-]+)+$")
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")


@dataclass(frozen=True, slots=True)
class LoaderSpec:
    """A registered loader, the plugin that registered it, and whether it runs in an isolated worker
    process (the default) or may run in a thread (see :mod:`runiq.rag._loaders.pool`)."""

    loader: DocumentLoader
    plugin: str
    isolated: bool = True


class LoaderRegistry:
    """Loaders by name, resolved by file extension (case-insensitive) or media type.

    Each extension and media type belongs to one loader. A second claim is a configuration error naming
    both plugins, unless it is made with ``replace=True``: built-ins register first, so a plugin can take
    over ``.html`` from the built-in loader explicitly and never by accident.
    """

    def __init__(self) -> None:
        self._specs: dict[str, LoaderSpec] = {}
        self._extensions: dict[str, str] = {}
        self._media_types: dict[str, str] = {}
        self._current_plugin = "<direct>"

    def set_current_plugin(self, name: str) -> None:
        self._current_plugin = name

    def add(self, loader: DocumentLoader, *, replace: bool = False, isolated: bool = True) -> None:
        """Register ``loader``. ``isolated=False`` lets it run in a thread instead of a forked worker:
        only for a parse that is linear in its input and never inflates it, since a thread cannot be
        stopped at the time budget nor capped in memory."""
        name = _validated(loader)
        existing = self._specs.get(name)
        if existing is not None:
            raise RagConfigurationError(
                f"Document loader '{name}' is registered by both '{existing.plugin}' and '{self._current_plugin}'."
            )
        claims = [(self._extensions, ext, "File extension") for ext in loader.extensions]
        claims += [(self._media_types, media, "Media type") for media in loader.media_types]
        for table, key, label in claims:
            owner = table.get(key)
            if owner is not None and not replace:
                raise RagConfigurationError(
                    f"{label} '{key}' is claimed by loaders '{owner}' ('{self._specs[owner].plugin}') and "
                    f"'{name}' ('{self._current_plugin}'); register the second with replace=True to take it over."
                )
        self._specs[name] = LoaderSpec(loader, self._current_plugin, isolated=bool(isolated))
        for table, key, _ in claims:
            table[key] = name

    def get(self, name: str) -> LoaderSpec:
        spec = self._specs.get(name)
        if spec is None:
            raise RagConfigurationError(f"No document loader named '{name}' is registered.")
        return spec

    def names(self) -> list[str]:
        return sorted(self._specs)

    @property
    def extensions(self) -> frozenset[str]:
        """Every extension some loader reads: a directory source's default selection."""
        return frozenset(self._extensions)

    def for_path(self, path: str | PurePath) -> DocumentLoader | None:
        """The loader for a file name's longest claimed suffix (``a.tar.gz``: ``.tar.gz``, then ``.gz``)."""
        spec = self.spec_for_path(path)
        return spec.loader if spec is not None else None

    def spec_for_path(self, path: str | PurePath) -> LoaderSpec | None:
        """Like :meth:`for_path`, with the plugin and isolation the loader was registered with."""
        suffixes = PurePath(str(path).lower()).suffixes
        for first in range(len(suffixes)):
            name = self._extensions.get("".join(suffixes[first:]))
            if name is not None:
                return self._specs[name]
        return None

    def for_media_type(self, media_type: str) -> DocumentLoader | None:
        """The loader for a MIME type; parameters (``; charset=utf-8``) are ignored."""
        name = self._media_types.get(media_type.split(";", 1)[0].strip().lower())
        return self._specs[name].loader if name is not None else None

    def reads(self, path: str | PurePath) -> bool:
        return self.for_path(path) is not None

    def require(self, path: str | PurePath) -> DocumentLoader:
        """Like :meth:`for_path`, but no loader is the per-document failure ``unsupported_format``."""
        loader = self.for_path(path)
        if loader is None:
            raise DocumentLoadError(LoadFailureCode.UNSUPPORTED_FORMAT)
        return loader


def _validated(loader: DocumentLoader) -> str:
    name = getattr(loader, "name", None)
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise RagConfigurationError("A document loader name must be a non-empty trimmed string.")
    if not isinstance(loader, DocumentLoader) or not callable(loader.load):
        raise RagConfigurationError(f"Document loader '{name}' must have extensions, media_types and load().")
    extensions, media_types = loader.extensions, loader.media_types
    if not isinstance(extensions, frozenset) or not all(isinstance(e, str) and _EXTENSION.match(e) for e in extensions):
        raise RagConfigurationError(
            f"Document loader '{name}' must declare extensions as a frozenset of lower-case '.ext' strings."
        )
    if not isinstance(media_types, frozenset) or not all(
        isinstance(m, str) and _MEDIA_TYPE.match(m) for m in media_types
    ):
        raise RagConfigurationError(
            f"Document loader '{name}' must declare media_types as a frozenset of lower-case 'type/subtype'."
        )
    if type(loader).__module__ == "__main__":
        raise RagConfigurationError(
            f"Document loader '{name}' is defined in __main__; define it in an importable module: "
            "worker processes import loaders by name."
        )
    try:
        pickle.dumps(loader)
    except Exception:
        picklable = False
    else:
        picklable = True
    if not picklable:
        raise RagConfigurationError(f"Document loader '{name}' must be picklable: it runs in a worker process.")
    return name

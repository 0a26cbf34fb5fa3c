"""Change detection by stamps: which listed documents a run reads at all.

A source that offers :class:`~runiq.rag._sources.StampedSource` lists its candidates a window at a time
with their stamps (a file's size, modification time and what reads it); a store that offers
:class:`~runiq.rag._stores.DocumentStamps` keeps each document's stamp beside its content hash. Per
window, :class:`StampChooser` asks the store for the stored stamps (one call) and reads only the
candidates whose stamp differs, has none, or is not stored: the others are unchanged and are counted
as skipped without being read. A stamp is stored with the index's configuration fingerprint folded in
(the one :meth:`~runiq.rag.RagDocument.content_hash` folds in), so a configuration change reads
everything again. What is read goes through the content hash as before: a changed stamp over the same
content embeds nothing, and the new stamp is then stored (:meth:`DocumentStamps.update_stamps`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from runiq.rag._sources.base import SourceStamp
from runiq.rag._stores.base import DocumentStamps

__all__ = ["StampChooser"]


class StampChooser:
    """One source's :data:`~runiq.rag._sources.ReadChooser` in one run, and the stamps of what it chose
    to read, until each document arrives (:meth:`take`)."""

    def __init__(
        self,
        store: DocumentStamps,
        index_name: str,
        configuration_fingerprint: str,
        accept: Callable[[str], bool] | None = None,
    ) -> None:
        self._store = store
        self._name = index_name
        self._accept = accept
        self._configuration = hashlib.sha256(configuration_fingerprint.encode("utf-8")).hexdigest()[:16]
        self._chosen: dict[str, str] = {}

    async def choose(self, candidates: Sequence[SourceStamp]) -> list[bool]:
        """For each candidate, whether to read it; candidates ``accept`` refuses (another worker's share
        of a shared run) are not read."""
        accept = self._accept
        mine = [accept is None or accept(candidate.document_id) for candidate in candidates]
        stamps = [
            self._stored_form(c.stamp) if c.stamp is not None and own else None
            for c, own in zip(candidates, mine, strict=True)
        ]
        asked = [c.document_id for c, stamp in zip(candidates, stamps, strict=True) if stamp is not None]
        stored = await self._store.document_stamps(self._name, asked) if asked else {}
        read: list[bool] = []
        for candidate, own, stamp in zip(candidates, mine, stamps, strict=True):
            if not own or (stamp is not None and stored.get(candidate.document_id) == stamp):
                read.append(False)
                continue
            read.append(True)
            if stamp is not None:
                self._chosen[candidate.document_id] = stamp
        return read

    def take(self, document_id: str) -> str | None:
        """The stamp to store with a document this chooser chose to read (None: store it without one)."""
        return self._chosen.pop(document_id, None)

    def _stored_form(self, stamp: str) -> str:
        return f"{stamp}|{self._configuration}"

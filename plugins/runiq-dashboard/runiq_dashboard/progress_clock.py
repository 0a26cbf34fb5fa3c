"""When a running operation last moved: the time its counters last changed, as this server saw them.

runiq's operation snapshots carry ``started_at`` and ``completed_at`` only, so a page showing "updated"
would stand still at the start for a whole run. :class:`ProgressClock` remembers each running
operation's last counters and the time they were first seen different; a finished operation's time is
its ``completed_at``. The precision is that of the readers (the page polls every 1.5 s while a run is
active). Entries go when their operation is seen finished, and at most :data:`MAX_TRACKED` are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime

from runiq.rag import RagIngestionOperation, RagIngestionProgress

__all__ = ["MAX_TRACKED", "ProgressClock"]

MAX_TRACKED = 256
_NOTHING_YET = RagIngestionProgress()


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ProgressClock:
    def __init__(self, now: Callable[[], datetime] = _utc_now) -> None:
        self._now = now
        self._seen: OrderedDict[str, tuple[RagIngestionProgress, datetime]] = OrderedDict()

    def __len__(self) -> int:
        """Running operations remembered."""
        return len(self._seen)

    def updated_at(self, operation: RagIngestionOperation) -> datetime:
        key = operation.operation_id
        if operation.completed_at is not None:
            self._seen.pop(key, None)
            return operation.completed_at
        seen = self._seen.get(key)
        if seen is not None and seen[0] == operation.progress:
            return seen[1]
        # Seen first with no counters yet: nothing has moved since the start.
        at = operation.started_at if seen is None and operation.progress == _NOTHING_YET else self._now()
        self._seen[key] = (operation.progress, at)
        self._seen.move_to_end(key)
        while len(self._seen) > MAX_TRACKED:
            self._seen.popitem(last=False)
        return at

"""Ingestion strategies: frozen values that say when an index ingests automatically.

The strategy controls automatic triggers only; every index also accepts a manual run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from runiq.errors import call_translated, replacing
from runiq.rag._errors import RagConfigurationError

__all__ = ["IngestionBuilder", "IngestionStrategy", "IngestionStrategyKind", "SharedRunOptions", "normalise_schedule"]

_CRON_CHARS = re.compile(r"^[0-9*,\-/]+$")


class IngestionStrategyKind(StrEnum):
    MANUAL = "manual"  # only explicit starts
    ON_STARTUP = "on_startup"  # Host.start() blocks until ingestion completes
    BACKGROUND_ON_STARTUP = "background_on_startup"  # started with the host, does not block it
    SCHEDULED = "scheduled"  # five-field cron, per-process scheduler


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedRunOptions:
    """Opt-in: every process that runs this index's ingestion joins one run shared through the store.

    The corpus is split into ``buckets`` by a stable hash of the document id; each worker claims a
    bucket at a time under a lease of ``lease_seconds`` that it renews while it works, and a bucket
    whose holder stopped renewing is taken over when the lease has expired. With ``deployment`` set,
    a startup run (on_startup, background_on_startup) whose deployment already completed a run is not
    repeated: the process reports that run instead. See ``docs/explanation/scaling.md``.
    """

    buckets: int = 16
    lease_seconds: float = 30.0
    deployment: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.buckets, bool) or not isinstance(self.buckets, int) or not 1 <= self.buckets <= 4096:
            raise RagConfigurationError("Shared ingestion runs need between 1 and 4096 buckets.")
        lease = self.lease_seconds
        if isinstance(lease, bool) or not isinstance(lease, int | float) or not 1.0 <= lease <= 3600.0:
            raise RagConfigurationError("A shared ingestion run's lease must be between 1 and 3600 seconds.")
        object.__setattr__(self, "lease_seconds", float(lease))
        if self.deployment is not None and (
            not isinstance(self.deployment, str) or not 0 < len(self.deployment) <= 200 or "\x00" in self.deployment
        ):
            raise RagConfigurationError("A deployment name must be a non-empty string of at most 200 characters.")


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestionStrategy:
    kind: IngestionStrategyKind = IngestionStrategyKind.MANUAL
    schedule: str | None = None
    time_zone: str | None = None
    coordinate: bool = False  # scheduled only: one instance per index through the store's lease
    shared: SharedRunOptions | None = None  # any kind: runs shared by every process (store's WorkClaims)

    def __post_init__(self) -> None:
        # Translated outside ``except``: the enum's ValueError quotes the value.
        unknown = RagConfigurationError("Unknown ingestion strategy kind.")
        kind = call_translated(lambda: IngestionStrategyKind(self.kind), replacing(ValueError, unknown))
        object.__setattr__(self, "kind", kind)
        if self.kind is IngestionStrategyKind.SCHEDULED:
            if self.schedule is None:
                raise RagConfigurationError("A scheduled ingestion strategy needs a five-field cron schedule.")
            object.__setattr__(self, "schedule", normalise_schedule(self.schedule))
            if self.time_zone is not None:
                _check_time_zone(self.time_zone)
        elif self.schedule is not None or self.time_zone is not None or self.coordinate:
            raise RagConfigurationError("Only a scheduled ingestion strategy takes a schedule or time zone.")


def normalise_schedule(expression: str) -> str:
    """Collapse whitespace and validate a five-field cron expression (numbers, ``* , - /`` only)."""
    if not isinstance(expression, str):
        raise RagConfigurationError("A cron schedule must be a string.")
    from croniter import croniter  # here, not at import: only a cron strategy needs it

    fields = expression.split()
    normalised = " ".join(fields)
    if (
        len(fields) != 5
        or not all(_CRON_CHARS.match(f) and _ranges_ascend(f) for f in fields)
        or not croniter.is_valid(normalised)
    ):
        raise RagConfigurationError(
            "Invalid cron schedule: use five fields (minute hour day month weekday) "
            "with numbers, '*', ',', '-' and '/'."
        )
    return normalised


def _ranges_ascend(field: str) -> bool:
    """croniter accepts wrap-around ranges such as ``10-5``; we reject them as ambiguous."""
    for part in field.split(","):
        bounds = part.split("/", 1)[0].split("-")
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit() and int(bounds[0]) > int(bounds[1]):
            return False
    return True


def _check_time_zone(name: str) -> None:
    # Translated outside ``except``: ZoneInfo's errors quote the name (a path, for a bad one).
    unknown = RagConfigurationError("Unknown time zone for the ingestion schedule.")
    call_translated(lambda: ZoneInfo(name), replacing((ZoneInfoNotFoundError, ValueError), unknown))


class IngestionBuilder:
    """``configure_ingestion(lambda ingestion: ingestion.on_startup())``: exactly one selection."""

    def __init__(self) -> None:
        self._strategy: IngestionStrategy | None = None
        self._shared: SharedRunOptions | None = None

    def _select(self, strategy: IngestionStrategy) -> IngestionBuilder:
        if self._strategy is not None:
            raise RagConfigurationError("An ingestion strategy was already selected for this index.")
        self._strategy = strategy
        return self

    def manual(self) -> IngestionBuilder:
        return self._select(IngestionStrategy(kind=IngestionStrategyKind.MANUAL))

    def on_startup(self) -> IngestionBuilder:
        return self._select(IngestionStrategy(kind=IngestionStrategyKind.ON_STARTUP))

    def background_on_startup(self) -> IngestionBuilder:
        return self._select(IngestionStrategy(kind=IngestionStrategyKind.BACKGROUND_ON_STARTUP))

    def scheduled(self, cron: str, time_zone: str | None = None, *, coordinate: bool = False) -> IngestionBuilder:
        """Five-field cron in ``time_zone`` (default: the process's local zone). ``coordinate=True`` asks the
        store for a cross-process lease (PostgreSQL advisory locks) so one instance runs each tick."""
        return self._select(
            IngestionStrategy(
                kind=IngestionStrategyKind.SCHEDULED, schedule=cron, time_zone=time_zone, coordinate=coordinate
            )
        )

    def shared_runs(
        self, *, buckets: int = 16, lease_seconds: float = 30.0, deployment: str | None = None
    ) -> IngestionBuilder:
        """Beside the strategy: every process ingesting this index joins one run shared through the store
        (a store with the ``WorkClaims`` capability: PostgreSQL), each taking buckets of documents."""
        if self._shared is not None:
            raise RagConfigurationError("Shared ingestion runs were already configured for this index.")
        self._shared = SharedRunOptions(buckets=buckets, lease_seconds=lease_seconds, deployment=deployment)
        return self

    def build(self) -> IngestionStrategy:
        strategy = self._strategy or IngestionStrategy()
        return strategy if self._shared is None else replace(strategy, shared=self._shared)

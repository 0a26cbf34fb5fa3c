"""Ingestion strategies: five-field cron validation and normalisation, time zones, schedule only when scheduled."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from runiq.rag import IngestionBuilder, IngestionStrategyKind, RagConfigurationError
from runiq.rag._ingestion.scheduler import next_fire_time
from runiq.rag._ingestion.strategies import IngestionStrategy, normalise_schedule
from runiq.settings import RuniqSettings

# The rejected examples listed in reference-behaviours §2.14, then bounds and syntax beyond them.
REFERENCE_REJECTED = [
    "",
    "not a schedule",
    "* * *",
    "*/0 * * * *",
    "10-5 * * * *",
    "1-2-3 * * * *",
    "1//2 * * * *",
    "60 * * * *",
]
MORE_REJECTED = [
    "   ",
    "0 24 * * *",  # hour 0-23
    "0 0 0 * *",  # day 1-31
    "0 0 32 * *",
    "0 0 * 0 *",  # month 1-12
    "0 0 * 13 *",
    "0 0 * * 8",  # weekday 0-7
    "0 0 * * 7-0",
    "0 0 * * * *",  # six fields
    "@daily",
    "0 0 * JAN *",
    "0 0 * * MON",
    "0 0 ? * *",
    "0 0 L * *",
    "-5 * * * *",
    "5- * * * *",
    "*-5 * * * *",
    ",5 * * * *",
    "5, * * * *",
    "*/ * * * *",
    "*/-1 * * * *",
    "1.5 * * * *",
]


@pytest.mark.parametrize("expression", REFERENCE_REJECTED + MORE_REJECTED)
def test_invalid_cron_is_rejected(expression: str) -> None:
    """Malformed, out-of-range or non-numeric five-field cron expressions are configuration errors."""
    with pytest.raises(RagConfigurationError, match="Invalid cron schedule"):
        normalise_schedule(expression)
    with pytest.raises(RagConfigurationError):
        IngestionBuilder().scheduled(expression)


@pytest.mark.parametrize("expression", [None, 5, ["*"] * 5])
def test_non_string_cron_is_rejected(expression: object) -> None:
    """A schedule must be a string."""
    with pytest.raises(RagConfigurationError):
        normalise_schedule(expression)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expression", "normalised"),
    [
        (" 0  2 * * * ", "0 2 * * *"),
        ("0\t2\n*  *\t*", "0 2 * * *"),
        ("* * * * *", "* * * * *"),
        ("*/15 * * * *", "*/15 * * * *"),
        ("0 2 * * 1-5", "0 2 * * 1-5"),
        ("0 0 1,15 * *", "0 0 1,15 * *"),
        ("1-5/2 * * * *", "1-5/2 * * * *"),
        ("5-5 * * * *", "5-5 * * * *"),
        ("59 23 31 12 7", "59 23 31 12 7"),
        ("0 0 * * 0-7", "0 0 * * 0-7"),
    ],
)
def test_valid_cron_is_normalised(expression: str, normalised: str) -> None:
    """Valid expressions are accepted and whitespace-normalised to single spaces."""
    assert normalise_schedule(expression) == normalised
    strategy = IngestionBuilder().scheduled(expression).build()
    assert strategy.schedule == normalised


def test_scheduled_needs_a_schedule() -> None:
    """A Scheduled strategy without a schedule is rejected."""
    with pytest.raises(RagConfigurationError, match="needs a five-field cron"):
        IngestionStrategy(kind=IngestionStrategyKind.SCHEDULED)


@pytest.mark.parametrize(
    "kind",
    [IngestionStrategyKind.MANUAL, IngestionStrategyKind.ON_STARTUP, IngestionStrategyKind.BACKGROUND_ON_STARTUP],
)
def test_schedule_on_a_non_scheduled_strategy_is_rejected(kind: IngestionStrategyKind) -> None:
    """Only a Scheduled strategy takes a schedule or a time zone."""
    with pytest.raises(RagConfigurationError, match="Only a scheduled"):
        IngestionStrategy(kind=kind, schedule="0 2 * * *")
    with pytest.raises(RagConfigurationError, match="Only a scheduled"):
        IngestionStrategy(kind=kind, time_zone="UTC")


@pytest.mark.parametrize("kind", ["weird", None])
def test_undefined_strategy_kind_is_rejected(kind: object) -> None:
    """A kind that is not an IngestionStrategyKind is rejected (reference: an undefined kind fails)."""
    with pytest.raises(RagConfigurationError):
        IngestionStrategy(kind=kind)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", [IngestionStrategyKind.ON_STARTUP, IngestionStrategyKind.SCHEDULED])
def test_strategy_kind_given_by_value_is_the_enum_member(kind: IngestionStrategyKind) -> None:
    """A kind given by value is stored as the enum member (the runtime compares kinds by identity)."""
    schedule = "0 2 * * *" if kind is IngestionStrategyKind.SCHEDULED else None
    strategy = IngestionStrategy(kind=kind.value, schedule=schedule)  # type: ignore[arg-type]
    assert strategy.kind is kind


def test_schedule_on_non_scheduled_strategy_from_settings_is_rejected() -> None:
    """In settings, a schedule or time zone beside strategy 'manual' fails at registration."""
    from runiq.hosting import HostBuilder
    from runiq.rag import add_runiq_rag

    settings = RuniqSettings(
        rag={
            "indexes": {
                "docs": {
                    "sources": [{"path": "/docs"}],
                    "embedding": {"provider": "hashing"},
                    "ingestion": {"strategy": "manual", "schedule": "0 2 * * *"},
                }
            }
        }
    )
    with pytest.raises(RagConfigurationError, match="Only a scheduled"):
        add_runiq_rag(HostBuilder(settings=settings, load_entry_points=False))


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"])
def test_known_time_zones_are_accepted(zone: str) -> None:
    """IANA time-zone names are accepted and stored unchanged."""
    assert IngestionBuilder().scheduled("0 2 * * *", zone).build().time_zone == zone


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "", "../../etc/passwd", "/etc/localtime", "Europe/"])
def test_unknown_time_zones_are_rejected(zone: str) -> None:
    """Unknown names and path-like values are rejected without echoing them."""
    with pytest.raises(RagConfigurationError, match="Unknown time zone") as caught:
        IngestionBuilder().scheduled("0 2 * * *", zone)
    if zone:
        assert zone not in str(caught.value)


def test_time_zone_decides_when_a_schedule_fires() -> None:
    """'0 2 * * *' in Europe/Berlin fires at 01:00 UTC in winter and 00:00 UTC in summer."""
    winter = next_fire_time("0 2 * * *", datetime(2025, 1, 10, 0, 0, tzinfo=UTC), "Europe/Berlin")
    summer = next_fire_time("0 2 * * *", datetime(2025, 7, 10, 23, 30, tzinfo=UTC), "Europe/Berlin")
    assert winter.astimezone(UTC) == datetime(2025, 1, 10, 1, 0, tzinfo=UTC)
    assert summer.astimezone(UTC) == datetime(2025, 7, 11, 0, 0, tzinfo=UTC)
    in_utc = next_fire_time("0 2 * * *", datetime(2025, 1, 10, 0, 0, tzinfo=UTC), "UTC")
    assert in_utc == datetime(2025, 1, 10, 2, 0, tzinfo=UTC)


@pytest.fixture
def local_zone_kolkata(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make the process's local time zone Asia/Kolkata (UTC+05:30) for one test."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("local_zone_kolkata")
def test_without_a_time_zone_the_runtime_default_zone_applies() -> None:
    """With no time zone a schedule is read in the process's local zone; an explicit zone overrides it."""
    after = datetime(2025, 1, 10, 0, 0, tzinfo=UTC)  # 05:30 in Kolkata
    assert next_fire_time("0 6 * * *", after, None) == datetime(2025, 1, 10, 0, 30, tzinfo=UTC)
    assert next_fire_time("0 6 * * *", after, "UTC") == datetime(2025, 1, 10, 6, 0, tzinfo=UTC)

"""When to try a rerank request again, and how long to wait first.

Retried: a timeout, a connection failure, and the statuses that mean "not now" (408, 429, 500, 502,
503, 504 and any other 5xx). Never retried: other 4xx (the request itself is wrong, or the key).

The wait honours ``Retry-After`` (delay-seconds or an HTTP-date, RFC 9110 §10.2.3) when the server
sends one and it is at most ``max_wait``; a longer one gives up at once, because the context policy's
deadline would pass before it ended. Without the header the wait backs off exponentially, 0.5 s
doubling to at most 8 s, minus up to 25 % jitter so clients that failed together do not return together.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["RetryPolicy", "is_retryable_status", "parse_retry_after"]

_BASE_SECONDS = 0.5
_CAP_SECONDS = 8.0


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait according to a ``Retry-After`` header value, or ``None`` if absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)  # delay-seconds; a fraction ("1.5") is not RFC 9110 but is read too
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int
    max_wait: float

    def delay(self, retries_done: int, retry_after: float | None) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` to give up."""
        if retries_done >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_wait else None
        backoff = min(_CAP_SECONDS, _BASE_SECONDS * 2.0**retries_done)
        return backoff * (1.0 - 0.25 * random.random())  # noqa: S311 - jitter, not a secret

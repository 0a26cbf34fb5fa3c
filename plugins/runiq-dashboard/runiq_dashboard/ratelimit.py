"""The query endpoint's rate limit: one token bucket for all callers of one dashboard.

``capacity`` requests may arrive at once; tokens come back at ``capacity`` per ``period`` seconds. A
refused request learns how long until the next token (``Retry-After``). The bucket holds no caller
identity, so it keeps nothing per client and cannot grow. The event loop runs :meth:`acquire` without
an ``await`` in between, so concurrent requests cannot both take the last token.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, capacity: int, period: float = 60.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        if capacity < 1 or period <= 0:
            raise ValueError("a token bucket needs a capacity of at least 1 and a positive period")
        self._capacity = float(capacity)
        self._rate = capacity / period  # tokens per second
        self._clock = clock
        self._tokens = float(capacity)
        self._at = clock()

    def acquire(self) -> int | None:
        """Take a token: ``None`` when one was available, else the whole seconds until one is."""
        now = self._clock()
        self._tokens = min(self._capacity, self._tokens + max(now - self._at, 0.0) * self._rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        return max(1, math.ceil((1.0 - self._tokens) / self._rate))

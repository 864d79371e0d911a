"""Adaptive concurrency: an in-flight limit that backs off on 429s and recovers (AIMD).

The limit starts at the configured concurrency (its ceiling). A 429 halves it (multiplicative decrease)
— once per round trip: 429s from requests sent before the last decrease do not count again — and pauses
every new request for as long as its Retry-After asks. Each success adds 1/limit (additive increase: +1
per limit's worth of successes), back up to the ceiling. `current` is what the progress bar shows.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable


class AdaptiveLimit:
    """AIMD limit on requests in flight; `acquire` before sending, `release` + `succeeded`/`throttled` after."""

    def __init__(self, ceiling: int, *, floor: int = 1, decrease: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 1 <= floor <= ceiling:
            raise ValueError(f"need 1 <= floor <= ceiling, got floor={floor}, ceiling={ceiling}")
        if not 0.0 < decrease < 1.0:
            raise ValueError(f"decrease must be between 0 and 1, got {decrease}")
        self.ceiling, self.floor, self.decrease = ceiling, floor, decrease
        self.clock = clock
        self.limit = float(ceiling)
        self.in_flight = 0
        self.pause_until = 0.0
        self.epoch = 0  # bumped at each decrease
        self.throttles = 0  # 429s seen
        self.decreases = 0
        self.lowest = ceiling
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def current(self) -> int:
        """The in-flight limit now."""
        return max(self.floor, int(self.limit))

    async def acquire(self) -> int:
        """Wait for a free place (and any Retry-After pause); returns a ticket for `throttled`."""
        while True:
            delay = self.pause_until - self.clock()
            if delay > 0:
                await asyncio.sleep(delay)
                continue
            if self.in_flight < self.current:
                self.in_flight += 1
                return self.epoch
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if not waiter.done():
                    waiter.cancel()

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def succeeded(self) -> None:
        """Additive increase: one more place after `limit` successes, up to the ceiling."""
        before = self.current
        self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        if self.current > before:
            self._wake()

    def throttled(self, ticket: int, retry_after: float | None) -> None:
        """A 429 for a request sent with `ticket`: pause for Retry-After; halve the limit once per round trip."""
        self.throttles += 1
        if retry_after is not None and retry_after > 0:
            self.pause_until = max(self.pause_until, self.clock() + retry_after)
        if ticket < self.epoch:
            return  # sent before the last decrease: that congestion was already answered
        self.limit = max(float(self.floor), self.limit * self.decrease)
        self.epoch += 1
        self.decreases += 1
        self.lowest = min(self.lowest, self.current)

    def _wake(self) -> None:
        free = self.current - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def as_dict(self) -> dict[str, int]:
        return {"limit": self.current, "ceiling": self.ceiling, "lowest": self.lowest,
                "throttles": self.throttles, "decreases": self.decreases}

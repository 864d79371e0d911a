"""Adaptive concurrency: the in-flight limit backs off on 429s, honours Retry-After and recovers."""

from __future__ import annotations

import asyncio
import time

import pytest

from proctor.models import GenerateRequest, Message
from proctor.models._aimd import AdaptiveLimit
from proctor.models.openai import OpenAIModel
from proctor.testing import LocalServer

pytest.importorskip("uvicorn")


def test_decrease_once_per_round_trip_and_additive_recovery() -> None:
    lim = AdaptiveLimit(16)
    tickets = [lim.epoch] * 8  # eight requests sent at the same limit
    lim.throttled(tickets[0], None)
    assert lim.current == 8
    for t in tickets[1:]:
        lim.throttled(t, None)  # the same congestion: no further halving
    assert (lim.current, lim.throttles, lim.decreases) == (8, 8, 1)
    lim.throttled(lim.epoch, None)  # a request sent after the decrease: halve again
    assert lim.current == 4 and lim.lowest == 4
    for _ in range(5):
        lim.succeeded()
    assert lim.current == 5  # about +1 after a limit's worth of successes
    for _ in range(500):
        lim.succeeded()
    assert lim.current == 16  # never above the ceiling
    for _ in range(20):
        lim.throttled(lim.epoch, None)
    assert lim.current == 1  # never below the floor
    assert lim.as_dict() == {"limit": 1, "ceiling": 16, "lowest": 1, "throttles": 29, "decreases": 22}
    with pytest.raises(ValueError):
        AdaptiveLimit(4, floor=5)


async def test_acquire_waits_for_a_place_and_for_retry_after() -> None:
    lim = AdaptiveLimit(2)
    await lim.acquire()
    await lim.acquire()
    third = asyncio.create_task(lim.acquire())
    await asyncio.sleep(0.01)
    assert not third.done()  # the limit is full
    lim.release()
    await asyncio.wait_for(third, 1)
    lim.release()
    lim.release()
    lim.throttled(lim.epoch, 0.3)  # Retry-After: 0.3 s pauses every new request
    t0 = time.monotonic()
    await lim.acquire()
    assert time.monotonic() - t0 >= 0.29
    assert lim.current == 1


def _model(server: LocalServer, concurrency: int) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, concurrency=concurrency, max_retries=30, backoff_base=0.01,
                       timeout=10.0)


async def test_backs_off_against_a_rate_limited_server_and_recovers(srv: LocalServer) -> None:
    """A server that takes 4 requests at once (429 + Retry-After beyond): the adaptive client converges
    near 4, with far fewer 429s than a fixed limit of 32, loses nothing, and climbs back when the limit lifts."""
    srv.configure(capacity=4, latency=0.02, retry_after=0.02, fault_rate=0.0, responder="first")
    requests = [GenerateRequest((Message("user", f"Q{i}?\n(A) a\n(B) b"),)) for i in range(150)]
    adaptive = _model(srv, 32)
    gens = await adaptive.generate(requests)
    assert all(g.error is None for g in gens)
    adaptive_429s = srv.stats()["faults"].get("capacity", 0)
    assert adaptive.http.limiter.lowest <= 4

    srv.configure(capacity=4, latency=0.02, retry_after=0.02)
    fixed = _model(srv, 32)
    fixed.http.limiter = AdaptiveLimit(32, floor=32)  # a floor at the ceiling: no adaptation
    assert all(g.error is None for g in await fixed.generate(requests))
    fixed_429s = srv.stats()["faults"].get("capacity", 0)
    print(f"429s: adaptive {adaptive_429s}, fixed {fixed_429s}; lowest limit {adaptive.http.limiter.lowest}")
    assert adaptive_429s * 3 < fixed_429s, (adaptive_429s, fixed_429s)

    srv.configure(capacity=None, latency=0.0)
    more = [GenerateRequest((Message("user", f"R{i}?\n(A) a"),)) for i in range(600)]
    assert all(g.error is None for g in await adaptive.generate(more))
    assert adaptive.in_flight_limit == 32  # recovered to the configured concurrency
    await adaptive.aclose()
    await fixed.aclose()

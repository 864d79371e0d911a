"""A progress bar for long runs: done/total, a real rate, ETA, cache hits and errors (rich, on stderr).

Silent unless stderr is a terminal (so logs, pipes and CI stay clean); the counters work either way.

The bar counts samples. The runner hands a backend many items per call (a local model batches them),
so between two finished calls the bar would stand still; instead, a backend says how its call is
going through two functions that do nothing outside a run, and know nothing of the bar:

* `report(requests=, tokens=)` as work finishes inside a call: a local model after each batch, an HTTP
  backend after each response. The bar advances by the matching part of the call's items (the part of
  its requests, or of its tokens when the backend announced them with `expect(tokens=)`), and shows
  tokens/s (local models) or requests/s (APIs).
* `in_flight(+1)` / `in_flight(-1)` around a request on the wire (HTTP backends): the bar shows how
  many are in flight.

The runner opens one `Progress.chunk()` per call (a context variable; it follows the call into
`asyncio.to_thread` and into the backend's own tasks), then `Progress.finish()` counts its samples.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as _RichProgress
from rich.text import Text


@dataclass
class Chunk:
    """One model call of the runner: `items` samples; its requests and tokens, once announced."""

    bar: Progress
    items: int
    requests: int = 0
    tokens: int = 0
    credited: float = 0.0  # items shown as done before the call's samples are


_CURRENT: ContextVar[Chunk | None] = ContextVar("proctor_progress_chunk", default=None)


def report(*, requests: int = 0, tokens: int = 0) -> None:
    """Work finished inside the current model call (no-op outside a run); see the module docstring."""
    chunk = _CURRENT.get()
    if chunk is not None:
        chunk.bar.work(chunk, requests=requests, tokens=tokens)


def in_flight(delta: int) -> None:
    """A request went on the wire (+1) or came back (-1) in the current model call (no-op outside a run)."""
    chunk = _CURRENT.get()
    if chunk is not None:
        chunk.bar.flight(delta)


def expect(*, requests: int | None = None, tokens: int | None = None) -> None:
    """The current call's size: the runner announces its requests; a backend whose unit of work is the
    token (a local model scoring a prefix tree) announces its tokens, and progress is then measured in them."""
    chunk = _CURRENT.get()
    if chunk is not None:
        chunk.requests = chunk.requests if requests is None else requests
        chunk.tokens = chunk.tokens if tokens is None else tokens


class _RateColumn(ProgressColumn):
    """tokens/s when the backend reports tokens, else requests/s (+ in flight), else samples/s."""

    def render(self, task: Task) -> Text:
        rate = task.fields.get("rate") or ""
        if not rate:
            speed = task.finished_speed or task.speed
            rate = "? it/s" if speed is None else f"{speed:.1f} it/s"
        return Text(rate, style="progress.data.speed")


class Progress:
    """`with Progress(total) as bar: bar.advance(1, cache_hit=..., error=...)`."""

    def __init__(self, total: int, enabled: bool | None = None, description: str = "",
                 in_flight: int | None = None) -> None:
        self.total = total
        self.in_flight = in_flight  # an HTTP backend's adaptive in-flight limit (lowered after 429s)
        self.completed = 0
        self.cache_hits = 0
        self.errors = 0
        self.requests = 0
        self.tokens = 0
        self.on_wire = 0  # requests on the wire now (HTTP backends report them)
        self.partial = 0.0  # credit of calls still running
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._bar: _RichProgress | None = None
        self._task: TaskID | None = None
        if self.enabled:
            self._bar = _RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("[cyan]{task.fields[hits]} cached"),
                TextColumn("[red]{task.fields[errors]} errors"),
                TextColumn("[magenta]{task.fields[limit]}"),
                console=Console(stderr=True),
            )
            self._task = self._bar.add_task(description or "running", total=total, hits=0, errors=0, rate="",
                                            limit=self._limit_text())

    def advance(self, n: int = 1, cache_hit: bool = False, error: bool = False) -> None:
        """Count `n` finished items (all cache hits, or all errors, when flagged)."""
        with self._lock:
            self.completed += n
            self.cache_hits += n if cache_hit else 0
            self.errors += n if error else 0
            self._show(advance=n)

    @contextmanager
    def chunk(self, items: int) -> Iterator[Chunk]:
        """The runner, around one model call of `items` samples: what the backend reports advances the bar."""
        handle = Chunk(self, items)
        token = _CURRENT.set(handle)
        try:
            yield handle
        finally:
            _CURRENT.reset(token)

    def finish(self, chunk: Chunk, ok: int, errors: int) -> None:
        """A call's samples are done: its credit becomes `ok` finished samples and `errors` errored ones."""
        with self._lock:
            credited, chunk.credited = chunk.credited, 0.0
            self.partial -= credited
            self.completed += ok + errors
            self.errors += errors
            self._show(advance=ok + errors - credited)

    def work(self, chunk: Chunk, requests: int = 0, tokens: int = 0) -> None:
        """Backend work inside `chunk`: part of its items shown as done (never all), and the rates."""
        with self._lock:
            self.requests += requests
            self.tokens += tokens
            if chunk.tokens:
                part = tokens / chunk.tokens
            else:
                part = requests / chunk.requests if chunk.requests else 0.0
            credit = min(chunk.items * part, 0.99 * chunk.items - chunk.credited)
            credit = max(credit, 0.0)
            chunk.credited += credit
            self.partial += credit
            self._show(advance=credit)

    def flight(self, delta: int) -> None:
        with self._lock:
            self.on_wire += delta
            self._show()

    def rate(self) -> str:
        """`1,234 tok/s`, `12.5 req/s · 32 in flight`, or "" (the bar then shows samples/s)."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        if self.tokens:
            return f"{self.tokens / elapsed:,.0f} tok/s"
        if self.requests or self.on_wire:
            return f"{self.requests / elapsed:.1f} req/s · {self.on_wire} in flight"
        return ""

    def _show(self, advance: float = 0.0) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=advance, hits=self.cache_hits, errors=self.errors, rate=self.rate(),
                             limit=self._limit_text())

    def _limit_text(self) -> str:
        return "" if self.in_flight is None else f"≤{self.in_flight} in flight"

    def __enter__(self) -> Self:
        self._started = time.monotonic()
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


__all__ = ["Chunk", "Progress", "expect", "in_flight", "report"]

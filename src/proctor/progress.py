"""A progress bar for long runs: done/total, items/s, ETA, cache hits and errors (rich, on stderr).

Silent unless stderr is a terminal (so logs, pipes and CI stay clean); the counters work either way.
"""

from __future__ import annotations

import sys
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


class _SpeedColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("? it/s" if speed is None else f"{speed:.1f} it/s", style="progress.data.speed")


class Progress:
    """`with Progress(total) as bar: bar.advance(1, cache_hit=..., error=...)`."""

    def __init__(self, total: int, enabled: bool | None = None, description: str = "",
                 in_flight: int | None = None) -> None:
        self.total = total
        self.in_flight = in_flight  # an HTTP backend's adaptive in-flight limit (lowered after 429s)
        self.completed = 0
        self.cache_hits = 0
        self.errors = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar: _RichProgress | None = None
        self._task: TaskID | None = None
        if self.enabled:
            self._bar = _RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                _SpeedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("[cyan]{task.fields[hits]} cached"),
                TextColumn("[red]{task.fields[errors]} errors"),
                TextColumn("[magenta]{task.fields[limit]}"),
                console=Console(stderr=True),
            )
            self._task = self._bar.add_task(description or "running", total=total, hits=0, errors=0,
                                            limit=self._limit_text())

    def advance(self, n: int = 1, cache_hit: bool = False, error: bool = False) -> None:
        """Count `n` finished items (all cache hits, or all errors, when flagged)."""
        self.completed += n
        self.cache_hits += n if cache_hit else 0
        self.errors += n if error else 0
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, advance=n, hits=self.cache_hits, errors=self.errors,
                             limit=self._limit_text())

    def _limit_text(self) -> str:
        return "" if self.in_flight is None else f"≤{self.in_flight} in flight"

    def __enter__(self) -> Self:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


__all__ = ["Progress"]

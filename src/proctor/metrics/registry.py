"""The registry summarize runs: the built-in metrics first (`builtin.BUILTIN`, registered on first use), then
the others in the order they were registered; `compute_metrics` runs them all over a run's samples in one pass
(each metric's `tally`), whether they are held in memory or read one at a time from disk."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TypeVar, cast, overload

from ..core.results import MetricValue, Results
from ..log.runlog import Sample
from . import builtin
from .base import Metric, MetricOutput, RunContext, StreamedMetric, Tally

_BUILTIN_FIELDS = frozenset(Results.model_fields) - {"schema_version", "metrics", "truncated_as", "extract",
                                                       "no_answer", "errors", "cluster"}
_registered: list[Metric] = []
_builtins_loaded = False

M = TypeVar("M", bound=Metric)
log = logging.getLogger("proctor.metrics")


def _load_builtins() -> None:
    """Register the built-in metrics once, on first use (so `import proctor` loads none of them)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    for metric in builtin.BUILTIN:
        _add(metric)


def _add(metric: Metric) -> None:
    if isinstance(metric, type) or not isinstance(metric, Metric):
        raise TypeError(f"{metric!r} is not a Metric (name, label, needs, compute)")
    unknown = set(metric.needs) - set(Sample.model_fields)
    if unknown:
        raise ValueError(f"metric {metric.name!r} needs {', '.join(sorted(unknown))}: not Sample fields")
    if any(m.name == metric.name for m in _registered):
        raise ValueError(f"a metric named {metric.name!r} is already registered")
    if metric.name in {"schema_version", "metrics", "truncated_as", "extract", "no_answer", "errors", "cluster"}:
        raise ValueError(f"{metric.name!r} is a results.json setting, not a metric name")
    _registered.append(metric)


@overload
def register(metric: type[M]) -> type[M]: ...


@overload
def register(metric: M) -> M: ...


def register(metric: M | type[M]) -> M | type[M]:
    """Register a metric so that every summary computes it: an instance, or a class (as a decorator; it is
    instantiated with no arguments). Returns what it was given. A name already registered is refused."""
    _load_builtins()
    _add(metric() if isinstance(metric, type) else metric)
    return metric


def unregister(name: str) -> None:
    """Remove a registered metric by name (tests, or a plugin replacing a built-in)."""
    _load_builtins()
    _registered[:] = [m for m in _registered if m.name != name]


def registered() -> list[Metric]:
    """The registered metrics in the order they run: the built-ins first, then the others as registered."""
    _load_builtins()
    return list(_registered)


def compute_metrics(samples: Iterable[Sample], context: RunContext, only: Collection[str] | None = None
                    ) -> tuple[dict[str, MetricOutput], dict[str, MetricValue]]:
    """Every registered metric over `samples`, in one pass (read one at a time: what each metric keeps of a sample
    is its `tally`'s, a few bytes; a plugin without `tally` is given its samples held): the built-ins' blocks by
    field name, and the others' values.

    A metric that raises or returns what its field cannot hold (the wrong type, a NaN) fails alone: it is
    recorded under `metrics.<name>` with the reason in `error` and a warning, and every other result stands. A
    plugin is given its own copy of each sample, so that one assigning `s.score` cannot change the others'.
    `only`: the metrics of these names alone (the samples are still read through)."""
    metrics = [m for m in registered() if only is None or m.name in only]
    tallies: list[Tally | Exception] = []
    for metric in metrics:
        try:
            tallies.append(metric.tally(context) if isinstance(metric, StreamedMetric) else _Held(metric, context))
        except Exception as e:  # noqa: BLE001 - a plugin fails in any way; ctrl-C (BaseException) still stops
            tallies.append(e)
    own = [not any(m is b for b in builtin.BUILTIN) for m in metrics]
    live = [(i, t) for i, t in enumerate(tallies) if not isinstance(t, Exception)]
    for s in samples:
        for i, t in live:
            try:
                t.add(s.model_copy() if own[i] else s)
            except Exception as e:  # noqa: BLE001 - as above
                tallies[i] = e
                live = [(j, u) for j, u in live if j != i]
    built: dict[str, MetricOutput] = {}
    extra: dict[str, MetricValue] = {}
    for metric, got in zip(metrics, tallies, strict=True):
        try:
            if isinstance(got, Exception):
                raise got
            value = _checked(metric, got.result())
        except Exception as e:  # noqa: BLE001 - as above
            _failed(metric, e, extra)
            continue
        _keep(metric, value, built, extra)
    return built, extra


def _failed(metric: Metric, e: Exception, extra: dict[str, MetricValue]) -> None:
    why = (f"{type(e).__name__}: {e}".splitlines() or [type(e).__name__])[0][:300]
    log.warning("metric %r failed (%s); it is recorded as failed, the other results stand", metric.name, why)
    extra[metric.name] = MetricValue(error=why)


def _keep(metric: Metric, value: MetricOutput | None, built: dict[str, MetricOutput],
          extra: dict[str, MetricValue]) -> None:
    if value is None:
        return
    if metric.name in _BUILTIN_FIELDS:
        built[metric.name] = value
    else:
        extra[metric.name] = cast(MetricValue, value)


@dataclass
class _Held:
    """A metric without `tally` (a plugin): its samples held, then computed at the end. The one place a summary
    holds samples: each such plugin's."""

    metric: Metric
    context: RunContext
    samples: list[Sample] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        self.samples.append(s)

    def result(self) -> MetricOutput | None:
        return self.metric.compute(self.samples, self.context)


def _checked(metric: Metric, value: object) -> MetricOutput | None:
    """`value` if its results.json field can hold it (every number finite), else a TypeError/ValueError."""
    if value is None:
        return None
    if metric.name in _BUILTIN_FIELDS:
        Results.model_validate({metric.name: value})
        return cast(MetricOutput, value)
    if not isinstance(value, MetricValue):
        raise TypeError(f"returned {type(value).__name__}; a metric that is not a results.json field returns "
                        "a MetricValue")
    return MetricValue.model_validate(value.model_dump())  # built with model_construct, a NaN is caught here

"""The `Metric` protocol, what a metric may know beyond the samples, and the registry summarize runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, overload, runtime_checkable

from ..runlog import (
    AnswerReading,
    Calibration,
    Cost,
    EpochSpread,
    JudgeAgreement,
    Manifest,
    MetricBlock,
    MetricValue,
    Results,
    Sample,
)

# What a metric computes: a built-in's typed block (its `Results` field), or a `MetricValue` for any other
MetricOutput = (MetricValue | MetricBlock | dict[str, MetricBlock] | EpochSpread | Calibration | JudgeAgreement | Cost
                | AnswerReading | float)


@dataclass(frozen=True)
class RunContext:
    """What a metric may know beyond the samples: the run's manifest (prices, judge), the bootstrap seed, the
    --no-answer policy."""

    manifest: Manifest | None = None
    seed: int = 0
    no_answer: str = "wrong"  # how the samples' unread replies were counted ("guess": 1/k already in their score)


@runtime_checkable
class Metric(Protocol):
    """A metric of a run, a pure function of its samples.

    `name` is its key in results.json: a built-in fills the `Results` field of that name; any other metric
    returns a `MetricValue`, stored under `metrics.<name>` and shown by the console summary and the report.
    `needs` names the `Sample` fields it reads (documentation, and what a sample must carry for it).
    `compute` returns None when the samples hold nothing it can be computed from (then it is left out).
    """

    name: str
    label: str
    needs: frozenset[str]

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricOutput | None: ...


_BUILTIN_FIELDS = frozenset(Results.model_fields) - {"schema_version", "metrics", "truncated_as", "extract",
                                                       "no_answer", "errors", "cluster"}
_registered: list[Metric] = []
_builtins_loaded = False

M = TypeVar("M", bound=Metric)


def _load_builtins() -> None:
    """Register the built-in metrics once, on first use (so `import proctor` loads none of them)."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    from . import builtin

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


def compute_metrics(samples: Sequence[Sample], context: RunContext) -> tuple[dict[str, MetricOutput], dict[str, MetricValue]]:
    """Every registered metric over `samples`: the built-ins' blocks by field name, and the others' values."""
    builtin: dict[str, MetricOutput] = {}
    extra: dict[str, MetricValue] = {}
    for metric in registered():
        value = metric.compute(samples, context)
        if value is None:
            continue
        if metric.name in _BUILTIN_FIELDS:
            builtin[metric.name] = value
        elif isinstance(value, MetricValue):
            extra[metric.name] = value
        else:
            raise TypeError(f"metric {metric.name!r} returned {type(value).__name__}; "
                            "a metric that is not a results.json field returns a MetricValue")
    return builtin, extra

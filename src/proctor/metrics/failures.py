"""Every failed sample by its class (`Sample.failure`, `proctor.log.failure`), the model's share apart from the
infrastructure's, and the accuracy had the infrastructure not failed: results.json's `failures`.

The bounds count the samples `overall` counts plus the infrastructure-failed ones it leaves out (errors), each
infrastructure-failed sample scored 0 (`low`) and 1 (`high`). The interval is `overall`'s method
(`proctor.stats.intervals.accuracy_ci`: Wilson, clustered by item over epochs, or the bootstrap for graded scores) at
each bound, joined: [interval(low).low, interval(high).high]. Whatever the infrastructure-failed samples would have
scored, their accuracy lies between the bounds, and the interval at it inside the union (the interval's ends rise
with the scores), so the union covers at least as often as the interval would have on the whole run, however the
failures fall (docs/statistics.md, "Infrastructure noise", with the simulation).
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

from ..core.results import INFRA_WARN_RATE, Failures, MetricValue
from ..log.failure import INFRA_FAILURES, MODEL_FAILURES, Failure
from ..log.runlog import Outcome, Sample
from ..stats.intervals import accuracy_ci
from ..util.columns import Labels
from .accuracy import _item_key
from .base import RunContext, Tallied


def widened(scores: array[float], infra: array[float], items: Labels, seed: int = 0
            ) -> tuple[MetricValue, MetricValue]:
    """The interval at the low bound and at the high: `scores` then, for each infrastructure-failed sample flagged
    in `infra` (1.0), 0 and 1 in its place (`items`: every sample's item, so epochs cluster)."""
    low = array("d", (0.0 if f else x for x, f in zip(scores, infra, strict=True)))
    high = array("d", (1.0 if f else x for x, f in zip(scores, infra, strict=True)))
    return accuracy_ci(low, items, seed=seed), accuracy_ci(high, items, seed=seed)


@dataclass
class FailureTally:
    """The classes counted, and each counted (or infrastructure-failed) sample's score and item, one at a time."""

    seed: int = 0
    n: int = 0
    by_class: Counter[str] = field(default_factory=Counter)
    scores: array[float] = field(default_factory=lambda: array("d"))
    infra: array[float] = field(default_factory=lambda: array("d"))  # 1.0: that sample failed by the infrastructure
    items: Labels = field(default_factory=Labels)

    def add(self, s: Sample) -> None:
        if s.outcome is Outcome.UNSCORED:
            return
        self.n += 1
        failure = s.failure
        if failure is not None:
            self.by_class[failure.value] += 1
        infra = failure in INFRA_FAILURES
        if infra or (s.scored and s.score is not None):  # `overall`'s samples, and the errors it leaves out
            self.scores.append(0.0 if infra or s.score is None else s.score)
            self.infra.append(1.0 if infra else 0.0)
            self.items.append(_item_key(s))

    def result(self) -> Failures | None:
        if not self.n:
            return None
        infra = sum(self.by_class[f.value] for f in INFRA_FAILURES)
        block = Failures(n=self.n, by_class={f.value: self.by_class[f.value] for f in Failure if self.by_class[f.value]},
                         model=sum(self.by_class[f.value] for f in MODEL_FAILURES), infrastructure=infra,
                         infrastructure_rate=infra / self.n)
        if not infra or not len(self.scores):
            return block
        low, high = widened(self.scores, self.infra, self.items, self.seed)
        return block.model_copy(update={"low": low.value, "high": high.value, "ci_low": low.ci_low,
                                        "ci_high": high.ci_high, "ci_method": f"{low.method} at both bounds"})


class FailureMetric(Tallied):
    """results.json's `failures`."""

    name = "failures"
    label = "failures"
    needs = frozenset({"outcome", "score", "error", "details", "finish_reason", "extracted", "item_id", "dataset"})

    def tally(self, context: RunContext) -> FailureTally:
        return FailureTally(seed=context.seed)


def failure_line(f: Failures) -> str | None:
    """`failures: 12 of 200 (6.0%) by the infrastructure (server 9, timeout 3), 40 by the model (wrong 38, limit 2);
    accuracy 0.500 … 0.560 had they answered, interval [0.431, 0.628]`: the bounds with every infrastructure failure
    wrong … right (None: nothing failed)."""
    if not f.model and not f.infrastructure:
        return None

    def parts(kinds: frozenset[Failure]) -> str:
        shown = [f"{k.value} {f.by_class[k.value]}" for k in Failure if k in kinds and f.by_class.get(k.value)]
        return f" ({', '.join(shown)})" if shown else ""

    line = (f"failures: {f.infrastructure} of {f.n} ({f.infrastructure_rate or 0.0:.1%}) by the infrastructure"
            f"{parts(INFRA_FAILURES)}, {f.model} by the model{parts(MODEL_FAILURES)}")
    if f.low is not None and f.high is not None and f.ci_low is not None and f.ci_high is not None:
        line += f"; accuracy {f.low:.3f} … {f.high:.3f} had they answered, interval [{f.ci_low:.3f}, {f.ci_high:.3f}]"
    return line


def infrastructure_warning(f: Failures | None) -> str | None:
    """The warning when infrastructure failures exceed `INFRA_WARN_RATE` of the samples (None: they do not)."""
    if f is None or not f.exceeds:
        return None
    return (f"{f.infrastructure} of {f.n} samples ({f.infrastructure_rate or 0.0:.1%}) failed by the infrastructure, "
            f"above {INFRA_WARN_RATE:.0%}: the accuracy says less about the model (the failures line bounds it)")

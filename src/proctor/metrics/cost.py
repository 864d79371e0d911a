"""Cost of the run at the manifest's prices: total (the model's and the judge's), per sample, per correct."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..core.results import Cost
from ..log.runlog import Manifest, Outcome, Sample
from ..scoring.judge import judge_usages
from .base import RunContext, Tallied
from .money import run_cost


def run_cost_of(samples: Iterable[Sample], manifest: Manifest) -> Cost | None:
    """None when the run has no price; errors with no usage are not billed."""
    acc = CostTally(manifest)
    for s in samples:
        acc.add(s)
    return acc.result()


class CostMetric(Tallied):
    name = "cost"
    label = "cost"
    needs = frozenset({"input_tokens", "output_tokens", "outcome", "details"})

    def tally(self, context: RunContext) -> CostTally:
        return CostTally(context.manifest)


_NONE = -1  # a token count the sample did not report


def _tokens() -> array[int]:
    return array("q")


def _usages(inputs: array[int], outputs: array[int]) -> Iterator[tuple[int | None, int | None]]:
    return ((None if i == _NONE else i, None if o == _NONE else o) for i, o in zip(inputs, outputs, strict=True))


@dataclass
class CostTally:
    """`run_cost_of` gathered one sample at a time: the billed samples' and the judge calls' token counts as
    columns (nothing when the run has no price)."""

    manifest: Manifest | None
    correct: int = 0
    usage: tuple[array[int], array[int]] = field(default_factory=lambda: (_tokens(), _tokens()))
    judge: tuple[array[int], array[int]] = field(default_factory=lambda: (_tokens(), _tokens()))

    def add(self, s: Sample) -> None:
        m = self.manifest
        if m is None or m.price is None:
            return
        self.correct += s.outcome is Outcome.CORRECT
        if not (s.outcome is Outcome.ERROR and s.input_tokens is None and s.output_tokens is None):
            _append(self.usage, s.input_tokens, s.output_tokens)
        if m.judge is not None:
            for i, o in judge_usages(s.details):
                _append(self.judge, i, o)

    def result(self) -> Cost | None:
        m = self.manifest
        if m is None or m.price is None:
            return None
        return run_cost(m.price, _usages(*self.usage), self.correct, judge_price=m.judge_price,
                        judge_usages=_usages(*self.judge) if m.judge is not None else None)


def _append(columns: tuple[array[int], array[int]], i: int | None, o: int | None) -> None:
    columns[0].append(_NONE if i is None else i)
    columns[1].append(_NONE if o is None else o)
